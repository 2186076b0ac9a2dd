# pmtrace build. Everything built goes under $(OUTPUT); `make V=1` shows
# full commands; WERROR=1 makes warnings errors (make test and CI set it).
#
#   all (default)  pmtrace
#   deps           install the Debian packages the build needs
#   test-deps      ... and those the tests need (oracles, QEMU, linters)
#   test           everything below, ending "N passed, N failed, N skipped"
#   unit, asan     the unit tests (no root), plain and under ASan+UBSan
#   fuzz           every libFuzzer target (tests/fuzz/), FUZZ_SECONDS each
#   lint           clang-format, shellcheck, the man page, tools/check-deps
#   vmtest         the runtime suite in QEMU guests (Debian's 6.1, 6.12)
#   vm-arm64-deps  what the arm64 guest needs (tests/run.sh vm-arm64)
#   test-sanitize  the runtime suite against pmtrace built with ASan+UBSan
#   testprogs      the runtime tests' programs (tests/testprogs/rules.mk)
#   tools          the benchmarks' helpers (tools/bench/)
#   man            the man page's roff from its scdoc source
#   vmlinux        regenerate vmlinux/$(ARCH)/vmlinux.h from this kernel
#   install, uninstall, clean
#
# ARCH=arm64 on an x86-64 machine (or ARCH=x86 on an arm64 one)
# cross-builds $(OUTPUT)/pmtrace, OUTPUT .output/ARCH, with Debian's
# cross compiler and the target's -dev packages through multiarch (make
# deps ARCH=arm64 installs them).
VERSION := 0.2.0
# every CPU by default (make -jN chooses): CI's build and the test
# suites' sub-makes wait on it
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# the kernel's names; the environment's ARCH may say amd64 or aarch64
ARCH ?= $(HOST_ARCH)
override ARCH := $(patsubst amd64,x86,$(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH))))
TRIPLET_x86 := x86_64-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
TRIPLET := $(TRIPLET_$(ARCH))
ifeq ($(TRIPLET),)
$(error ARCH=$(ARCH): pmtrace builds for x86 (x86_64) and arm64 (aarch64))
endif
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(TRIPLET)-
OUTPUT ?= .output/$(ARCH)
endif
OUTPUT ?= .output
# a cross build's binary stays in its OUTPUT, beside no native one
BIN := $(if $(CROSS_COMPILE),$(OUTPUT)/pmtrace,pmtrace)
PREFIX ?= /usr/local
DESTDIR ?=
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin CXX),default)
CXX := $(CROSS_COMPILE)g++
endif
CLANG ?= clang
BPFTOOL ?= bpftool
# the target's .pc files, through multiarch, when cross-building
PKG_CONFIG ?= $(if $(CROSS_COMPILE),PKG_CONFIG_LIBDIR=/usr/lib/$(TRIPLET)/pkgconfig:/usr/share/pkgconfig )pkg-config

VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
VMLINUX_H := vmlinux/$(ARCH)/vmlinux.h

# -Werror only when asked (WERROR=1, as make test and CI do): a
# distribution's next compiler must not break a plain build.
WERROR ?=
WARN = -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
# CFLAGS is the user's (make CFLAGS=-O0 keeps the build working); what the
# build needs goes in INCLUDES and DEPFLAGS, as libbpf-bootstrap does.
CFLAGS ?= -O2 -g
INCLUDES = -Isrc -Ibpf -I$(OUTPUT)/gen $(TEP_CFLAGS)
DEPFLAGS := -MMD -MP
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $(INCLUDES) $(DEPFLAGS) \
	     -DPMT_VERSION='"$(VERSION)"' $(if $(MHD_SONAME),-DPMT_MHD_SONAME='"$(MHD_SONAME)"')
LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
LIBBPF_LIBS := $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf)
TEP_CFLAGS := $(shell $(PKG_CONFIG) --cflags libtraceevent 2>/dev/null || echo -I/usr/include/traceevent)
TEP_LIBS := $(shell $(PKG_CONFIG) --libs libtraceevent 2>/dev/null || echo -ltraceevent)
PURE_LIBS := $(TEP_LIBS) -ldw -lelf -liberty -lz -lm -lyaml
# libmicrohttpd is loaded by --listen alone (src/run/listen_bpf.c), by the
# soname of the library its header comes with
MHD_SONAME := $(shell $(CROSS_COMPILE)objdump -p $$($(PKG_CONFIG) --variable=libdir libmicrohttpd 2>/dev/null || \
		echo /usr/lib/$(TRIPLET))/libmicrohttpd.so 2>/dev/null | awk '/SONAME/ {print $$2}')
HTTP_LIBS := -ldl -lpthread
LIBS := $(LIBBPF_LIBS) $(PURE_LIBS) $(HTTP_LIBS)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=all

# clang -target bpf does not search the host's system include paths; add
# them after our own so <linux/...> and <bpf/...> resolve as on the host
# (the target's: <asm/...> differ).
CLANG_SYS_INCLUDES := $(shell $(CLANG) --target=$(TRIPLET) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) \
	      -I$(dir $(VMLINUX_H)) -Ibpf $(CLANG_SYS_INCLUDES) -MMD -MP

.DEFAULT_GOAL := all

# Objects are rebuilt when WERROR changes (make test after a plain make).
FLAGS_FILE := $(OUTPUT)/werror
$(FLAGS_FILE): FORCE
	$(Q)mkdir -p $(OUTPUT)
	$(Q)echo '$(WERROR)' | cmp -s - $@ || echo '$(WERROR)' >$@

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
LEAN_BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/lean/%.bpf.o,$(BPF_SRCS))
FLAT_BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/flat/%.bpf.o,$(BPF_SRCS))
# src/ is one folder per job (README.md, Design), each holding both its
# halves. The line between them is drawn by file: NAME_bpf.c is the
# kernel-facing half (libbpf, the skeleton, or what calls into them),
# every other file is pure. Pure files need neither libbpf nor the
# skeleton: they compile without the skeleton's include path and the unit
# tests link exactly them, without -lbpf, so a wrong dependency fails the
# build (tools/check-deps checks the includes).
ALL_SRCS := $(wildcard src/*/*.c)
LOADER_SRCS := $(filter %_bpf.c,$(ALL_SRCS))
PURE_SRCS := $(filter-out $(LOADER_SRCS),$(ALL_SRCS))
PURE_OBJS := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(PURE_SRCS))
LOADER_OBJS := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(LOADER_SRCS))
OBJS := $(PURE_OBJS) $(LOADER_OBJS)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/unit/%.o,$(UNIT_SRCS))
# the unit suite under ASan and UBSan: the pure objects are the fuzzer's
# (clang's, instrumented alike), compiled once for both
ASAN_OBJS := $(patsubst %.c,$(OUTPUT)/fuzzobj/%.o,$(PURE_SRCS)) $(patsubst %.c,$(OUTPUT)/asan/%.o,$(UNIT_SRCS))

.PHONY: FORCE all deps test-deps vm-arm64-deps test unit asan tools testprogs vmlinux clean fuzz fuzz-build vmtest test-load test-sanitize lint \
	install uninstall man
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BIN)

$(BIN): $(OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LIBS) -o $@

$(PURE_OBJS): $(OUTPUT)/src/%.o: src/%.c $(FLAGS_FILE)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The system call numbers of the headers pmtrace is built with (they are
# the kernel's ABI: a kernel only adds to them): name, number. A second
# pass of the preprocessor gives each its number (arm64's generic table
# defines some through others: __NR_fcntl is __NR3264_fcntl).
$(OUTPUT)/gen/syscall_nrs.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q){ echo '#include <asm/unistd.h>'; echo '#include <asm/unistd.h>' | $(CC) -dM -E - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/PMT_SYSCALL(\1, __NR_\1)/p'; } | \
		$(CC) -std=c11 -E -P - | \
		sed -n -e '/^PMT_SYSCALL(\(syscalls\|arch_specific_syscall\),/d' \
			-e '/^PMT_SYSCALL([a-z0-9_]*, [0-9][0-9]*)$$/p' | \
		sort -t, -k2 -n >$@.tmp
	$(Q)test -s $@.tmp && mv $@.tmp $@
$(OUTPUT)/src/tracefs/syscalls.o: $(OUTPUT)/gen/syscall_nrs.h

# Loader files include the skeleton: generate it first (order-only; -MMD
# records the real dependency once a file has been compiled).
$(LOADER_OBJS): $(OUTPUT)/src/%.o: src/%.c $(FLAGS_FILE) | $(OUTPUT)/pmtrace.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT) $(LIBBPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(FLAGS_FILE) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# All probe kinds are statically linked into one object: one skeleton, one
# set of shared maps (declared __weak in bpf/common.bpf.h).
$(OUTPUT)/pmtrace.bpf.o: $(BPF_OBJS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# The lean objects (bpf/lean.bpf.h): the same sources, every program but
# a plain stream's (PMT_LEAN=1, "lean") or but those and the flat
# aggregations' (PMT_LEAN=2, "flat") cut short. The loader opens them in
# the whole one's skeleton, so their maps, settings and programs must be
# laid out alike: the skeletons' declarations, names aside, are compared.
$(OUTPUT)/bpf/lean/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(FLAGS_FILE) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DPMT_LEAN=1 -c $< -o $@

$(OUTPUT)/bpf/flat/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(FLAGS_FILE) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DPMT_LEAN=2 -c $< -o $@

$(OUTPUT)/pmtrace_lean.bpf.o: $(LEAN_BPF_OBJS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/pmtrace_flat.bpf.o: $(FLAT_BPF_OBJS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/pmtrace.skel.h: $(OUTPUT)/pmtrace.bpf.o $(OUTPUT)/pmtrace_lean.skel.h $(OUTPUT)/pmtrace_flat.skel.h
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name pmtrace_bpf > $@.tmp
	$(Q)for f in $@.tmp $(OUTPUT)/pmtrace_lean.skel.h $(OUTPUT)/pmtrace_flat.skel.h; do \
		sed -n '/^struct pmtrace\(_lean\|_flat\)\{0,1\}_bpf {/,/^};/p' $$f | sed 's/pmtrace_\(lean\|flat\)_bpf/pmtrace_bpf/g'; \
	done | awk '/^struct pmtrace_bpf {/ { n++ } { t[n] = t[n] $$0 "\n" } \
		END { if (n != 3 || t[1] != t[2] || t[1] != t[3]) { print "a lean object is laid out unlike the whole one"; exit 1 } }'
	$(Q)mv $@.tmp $@

$(OUTPUT)/pmtrace_%.skel.h: $(OUTPUT)/pmtrace_%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name pmtrace_$*_bpf > $@

# vmlinux.h is committed (see vmlinux/README.md); this regenerates it.
vmlinux:
	$(call msg,GEN,$(VMLINUX_H))
	$(Q)mkdir -p $(dir $(VMLINUX_H))
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $(VMLINUX_H)

# --- tests -----------------------------------------------------------------
$(OUTPUT)/unit/%.o: tests/unit/%.c $(FLAGS_FILE) | $(OUTPUT)/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -c $< -o $@

# the CPython 3.11 headers (libpython3.11-dev) the Python frames' layout
# is checked against
PY311_CFLAGS := -isystem /usr/include/python3.11
$(OUTPUT)/unit/py311_headers.o: ALL_CFLAGS += $(PY311_CFLAGS)
$(OUTPUT)/asan/tests/unit/py311_headers.o: FUZZ_CFLAGS += $(PY311_CFLAGS)

$(OUTPUT)/test_unit: $(UNIT_OBJS) $(PURE_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(PURE_LIBS) -o $@

$(OUTPUT)/asan/%.o: %.c $(FLAGS_FILE)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -fsanitize=address,undefined -Itests/unit -c $< -o $@

# (the fuzzer's coverage hooks: the sanitizers' runtime answers them)
$(OUTPUT)/test_unit_asan: $(ASAN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) -fsanitize=address,undefined,fuzzer-no-link $^ $(PURE_LIBS) -o $@

include tests/testprogs/rules.mk

# libFuzzer targets, tests/fuzz/*_fuzz.c (clang, ASan+UBSan+leaks): the
# pure objects built once, instrumented, and linked into each. `make fuzz`
# runs each for FUZZ_SECONDS, `make fuzz-NAME` one; the corpus grows in
# $(OUTPUT)/fuzz-corpus/NAME, seeded from tests/fuzz/corpus/NAME and, for
# elf, from real programs (the test programs: USDT notes, CFI, PLTs).
FUZZ_NAMES := $(patsubst tests/fuzz/%_fuzz.c,%,$(wildcard tests/fuzz/*_fuzz.c))
FUZZ_OBJS := $(patsubst %.c,$(OUTPUT)/fuzzobj/%.o,$(PURE_SRCS) src/btf/btftypes_bpf.c)
FUZZ_CFLAGS = -g -O1 $(WARN) -std=gnu11 -D_GNU_SOURCE $(INCLUDES) -fno-sanitize-recover=all
$(OUTPUT)/fuzzobj/%.o: %.c $(FLAGS_FILE) $(OUTPUT)/gen/syscall_nrs.h
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@
$(OUTPUT)/fuzz/%: tests/fuzz/%_fuzz.c $(FUZZ_OBJS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $< $(FUZZ_OBJS) \
		$(PURE_LIBS) -lbpf -o $@
FUZZ_ELF_SEEDS := $(addprefix $(OUTPUT)/testprogs/,usdt_prog nofp libdlthrow.so)
$(OUTPUT)/fuzz-seeds/elf: $(FUZZ_ELF_SEEDS)
	$(Q)mkdir -p $@
	$(Q)for f in $^; do strip -o $@/$$(basename $$f).stripped $$f && cp $$f $@/; done

FUZZ_SECONDS ?= 60
fuzz-build: $(addprefix $(OUTPUT)/fuzz/,$(FUZZ_NAMES)) $(OUTPUT)/fuzz-seeds/elf
fuzz: $(addprefix fuzz-,$(FUZZ_NAMES))
$(addprefix fuzz-,$(FUZZ_NAMES)): fuzz-%: $(OUTPUT)/fuzz/% $(OUTPUT)/fuzz-seeds/elf
	$(Q)mkdir -p $(OUTPUT)/fuzz-corpus/$* tests/fuzz/corpus/$*
	$(Q)$(OUTPUT)/fuzz/$* -max_total_time=$(FUZZ_SECONDS) -timeout=5 -rss_limit_mb=1024 \
		-print_final_stats=1 $(OUTPUT)/fuzz-corpus/$* tests/fuzz/corpus/$* \
		$(if $(filter elf,$*),$(OUTPUT)/fuzz-seeds/elf)

unit: $(OUTPUT)/test_unit
	$(Q)$(OUTPUT)/test_unit

asan: $(OUTPUT)/test_unit_asan
	$(Q)$(OUTPUT)/test_unit_asan

# Builds everything, then runs unit (plain and ASan+UBSan), the fuzzer, lint
# and the runtime tests (in QEMU guests and here);
# ends with one line "N passed, N failed[, N skipped]".
# warnings are errors in the tests (and so in CI), here and in the
# sub-makes tests/run.sh starts
test test-load vmtest: export WERROR = 1
# what the guests need first: tests/run.sh builds the unit suites and the
# fuzzer itself, once the guests have started
test: pmtrace testprogs tools
	$(Q)tests/run.sh

# The runtime suite under load, before a hand-in (CI runs make test): on
# this kernel beside two CPU hogs, then in the guests with this kernel's
# suite beside them (tests/run.sh load)
test-load: pmtrace testprogs tools
	$(Q)tests/run.sh load

# The runtime suite against a pmtrace built with ASan and UBSan
# ($(OUTPUT)/san/pmtrace), on this kernel: a sanitizer's report fails the
# test that ran it and is listed at the end (tests/run.sh sanitize). Not
# in make test (its memory and time are the sanitizers', and CI's minutes
# are spent): run before a change lands.
SAN_OBJS := $(patsubst src/%.c,$(OUTPUT)/san/src/%.o,$(ALL_SRCS))
$(OUTPUT)/san/src/%.o: src/%.c $(FLAGS_FILE) $(OUTPUT)/gen/syscall_nrs.h | $(OUTPUT)/pmtrace.skel.h
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(filter-out -O%,$(ALL_CFLAGS)) $(SAN_FLAGS) -I$(OUTPUT) $(LIBBPF_CFLAGS) -c $< -o $@
$(OUTPUT)/san/pmtrace: $(SAN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN_FLAGS) $^ $(LIBS) -o $@
test-sanitize: export WERROR = 1
test-sanitize: $(OUTPUT)/san/pmtrace pmtrace testprogs tools
	$(Q)tests/run.sh sanitize

# The whole runtime suite inside Debian's newest 6.1 and 6.12 kernels, in
# QEMU, both at once (one kernel: tools/vmtest PACKAGE tests/runtime/runner.sh)
vmtest: pmtrace testprogs tools
	$(Q)tests/run.sh vm

# clang-format (check mode, .clang-format) over the C sources and
# shellcheck over the scripts; make test runs it too.
LINT_C := $(wildcard bpf/*.c bpf/*.h bpf/abi/*.h src/*/*.c src/*/*.h tests/unit/*.[ch] tests/fuzz/*.c \
	    tests/testprogs/*.c tools/bench/*.c)
LINT_SH := tests/run.sh $(wildcard tests/runtime/*.sh) tools/vmtest tools/lint \
	   tools/install-packages .ci/run tools/completion/pmtrace
lint:
	$(Q)tools/lint $(LINT_C) -- $(LINT_SH) -- tools/man/pmtrace.8.scd

# --- benchmarks --------------------------------------------------------------
$(OUTPUT)/tools/%.bpf.o: tools/bench/%.bpf.c $(VMLINUX_H) | $(OUTPUT)/tools
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tools/%.skel.h: $(OUTPUT)/tools/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUTPUT)/tools/floor: tools/bench/floor.c $(OUTPUT)/tools/floor.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/tools $< $(LIBS) -o $@

$(OUTPUT)/tools/maxrss: tools/bench/maxrss.c | $(OUTPUT)/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@

tools: $(OUTPUT)/tools/floor $(OUTPUT)/tools/maxrss

# --- install ---------------------------------------------------------------
# As a Debian tool lays itself out: the binary in sbin (it needs root), the
# man page in section 8, the bash completion where bash-completion looks.
install: pmtrace
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 pmtrace $(DESTDIR)$(PREFIX)/sbin/pmtrace
	$(Q)install -D -m 0644 tools/man/pmtrace.8 $(DESTDIR)$(PREFIX)/share/man/man8/pmtrace.8
	$(Q)install -D -m 0644 tools/completion/pmtrace \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/pmtrace
	$(Q)mkdir -p $(DESTDIR)$(PREFIX)/lib/systemd/system
	$(Q)sed 's|/usr/local/sbin/pmtrace|$(PREFIX)/sbin/pmtrace|' tools/systemd/pmtrace-profiler.service \
		>$(DESTDIR)$(PREFIX)/lib/systemd/system/pmtrace-profiler.service

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(PREFIX)/sbin/pmtrace $(DESTDIR)$(PREFIX)/share/man/man8/pmtrace.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/pmtrace \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/pmtrace-profiler.service

# The man page's source is tools/man/pmtrace.8.scd; the roff is committed
# so a build needs no scdoc (make lint checks they agree).
man:
	$(Q)scdoc <tools/man/pmtrace.8.scd >tools/man/pmtrace.8

# --- setup -----------------------------------------------------------------
# the target's libraries: this machine's, or another's through multiarch
# beside a cross compiler (make deps ARCH=arm64)
LIB_PKGS := libbpf-dev libelf-dev libdw-dev zlib1g-dev libtraceevent-dev libiberty-dev \
	    libdebuginfod-dev libmicrohttpd-dev libgnutls28-dev libcrypt-dev libyaml-dev
DEB_ARCH_x86 := amd64
DEB_ARCH_arm64 := arm64
BUILD_PKGS := make clang llvm bpftool pkg-config \
	      $(if $(CROSS_COMPILE),gcc-$(subst _,-,$(TRIPLET)) \
		$(addsuffix :$(DEB_ARCH_$(ARCH)),$(LIB_PKGS)),gcc $(LIB_PKGS))
TEST_PKGS := python3 bpftrace linux-perf procps libclang-rt-14-dev util-linux libc6-dbg \
	     qemu-system-x86 busybox-static cpio xz-utils chromium clang-format shellcheck \
	     scdoc man-db prometheus golang-go curl systemtap-sdt-dev \
	     g++ rustc libbpf-tools libpython3.11-dev nginx-light wrk nodejs \
	     binutils elfutils debuginfod openjdk-17-jdk-headless openssl \
	     kmod xfsprogs nftables strace
# the arm64 guest (tests/run.sh vm-arm64): the cross build's packages, its
# test programs' (C++, USDT), QEMU for aarch64, mmdebstrap for its root
VM_ARM64_PKGS := qemu-system-arm mmdebstrap systemtap-sdt-dev:arm64 busybox-static cpio \
		 $(if $(filter arm64,$(HOST_ARCH)),g++,g++-aarch64-linux-gnu)
deps:
	$(Q)tools/install-packages $(BUILD_PKGS)
# (make test's arm64 guest's too). One after another, not as
# prerequisites: make -j ran deps and vm-arm64-deps at once, and the
# second apt-get found the first's lock ("Unable to lock directory").
test-deps:
	$(Q)$(MAKE) -s deps
	$(Q)$(MAKE) -s vm-arm64-deps
	$(Q)tools/install-packages $(TEST_PKGS)
vm-arm64-deps:
	$(Q)$(MAKE) -s deps ARCH=arm64
	$(Q)tools/install-packages $(VM_ARM64_PKGS)

$(OUTPUT)/bpf $(OUTPUT)/unit $(OUTPUT)/tools:
	$(Q)mkdir -p $@

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) pmtrace

# (a guest's root under $(OUTPUT)/vm has directories named *.d)
-include $(shell find $(OUTPUT) -path $(OUTPUT)/vm -prune -o -name '*.d' -type f -print 2>/dev/null)
