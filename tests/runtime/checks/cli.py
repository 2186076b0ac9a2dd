#!/usr/bin/python3
"""The checks of tests/runtime/cli.sh: python3 tests/runtime/checks/cli.py NAME ARGS...
(lib.sh's check). One function a check, named after its test."""
from common import *  # noqa: F401,F403

MODS = {"TYPEDEF", "CONST", "VOLATILE", "RESTRICT", "TYPE_TAG"}


def btf_paths(path):
    """Each member a BTF file's named structs and unions reach, as
    "struct.member.member..." and its bit offset from the struct's start:
    anonymous members looked through (one BTF may keep them, another
    flatten them out), typedefs and qualifiers skipped."""
    out = subprocess.run(["bpftool", "-j", "btf", "dump", "file", path], check=True,
                         capture_output=True, text=True).stdout
    types = {t["id"]: t for t in json.loads(out)["types"]}

    def skip(i):
        for _ in range(64):
            t = types.get(i)
            if not t or t["kind"] not in MODS:
                return t
            i = t["type_id"]
        return None

    paths = {}

    def walk(t, prefix, base, depth):
        for m in t.get("members", []):
            off = base + m["bits_offset"]
            mt = skip(m["type_id"])
            name = m["name"] if m["name"] != "(anon)" else ""
            p = prefix + "." + name if name else prefix
            if name:
                paths[p] = off
            if mt and mt["kind"] in ("STRUCT", "UNION") and depth < 16:
                walk(mt, p, off, depth + 1)

    for t in types.values():
        if t["kind"] in ("STRUCT", "UNION") and t["name"] != "(anon)":
            walk(t, t["kind"] + " " + t["name"], 0, 0)
    return paths


def core_btf_vs_min_core_btf(argv):
    """ours, bpftool gen min_core_btf's: the same members at the same offsets"""
    ours, theirs, what = btf_paths(argv[1]), btf_paths(argv[2]), argv[3]
    assert ours, f"{what}: no member in ours"
    diff = sorted(set(ours.items()) ^ set(theirs.items()))
    assert not diff, f"{what}: ours and bpftool's differ in {diff[:12]}"
    print(f"    {what}: {len(ours)} members, as bpftool gen min_core_btf has them", file=sys.stderr)


if __name__ == "__main__":
    main(globals())
