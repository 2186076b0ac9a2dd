// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes/fault.h"
#include "util/log.h"

static uint64_t slot_bit(const struct pmt_operand *o, unsigned nslots)
{
	if (o->src != PMT_FSRC_PTR_STR || (o->flags & PMT_FFLAG_XADDR) || o->off % 8 ||
	    o->off / 8u >= nslots)
		return 0;
	return 1ULL << (o->off / 8u);
}

uint64_t pmt_fault__mask(const struct pmt_probe *p, unsigned nslots)
{
	uint64_t m = 0;
	int i;

	for (i = 0; p->filter && i < p->filter->n && i < PMT_FILTER_MAX; i++)
		m |= slot_bit(&p->filter->e[i].o, nslots);
	if (p->action != PMT_ACT_STREAM) {
		for (i = 0; i < p->agg.nkeys && i < PMT_AGG_KEYS; i++)
			m |= slot_bit(&p->agg.keys[i].o, nslots);
		m |= slot_bit(&p->agg.value, nslots);
	}
	for (i = 0; i < PMT_STREAM_STRS; i++)
		m |= slot_bit(&p->strs[i], nslots);
	for (i = 0; i < (int)p->nvals && i < PMT_STREAM_VALS; i++)
		m |= slot_bit(&p->vals[i], nslots);
	return m;
}

bool pmt_fault__possible(void)
{
	static int known = -1;
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_SLEEPABLE);
	int fd;

	if (known < 0) {
		fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o);
		known = fd >= 0;
		if (fd >= 0)
			close(fd);
		else
			pmt_info("no sleepable uprobes here (%s): strings in pages a process "
				 "has not touched read as <fault>",
				 strerror(errno));
	}
	return known;
}

void pmt_fault__prepare(struct bpf_program *prog, bool needed)
{
	if (!needed || !pmt_fault__possible())
		return;
	bpf_program__set_autoload(prog, true);
	bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_SLEEPABLE);
}

void pmt_fault__keep(struct pmt_probe *p, struct bpf_link *link)
{
	if (!link) {
		pmt_warn("%s: cannot attach the program that pages strings in (%s): strings "
			 "in pages the process has not touched read as <fault>",
			 p->name, strerror(errno));
		return;
	}
	if (!pmt_probe__link_room(p)) {
		bpf_link__destroy(link);
		pmt_warn("%s: out of memory for the program that pages strings in", p->name);
		return;
	}
	p->links[p->nlinks++] = link;
}
