// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Layout: a tree of frames merged by name along each path, children in
 * name order; a frame's width is its share of all samples, its row its
 * depth, the root (all samples) at the bottom. Positions are written as
 * fractions (data-x, data-w) so the script can zoom without the tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/grow.h"
#include "output/flamegraph.h"

#define WIDTH 1200.0
#define PAD 10.0
#define ROW 16
#define TOP 48	   /* title, details line */
#define MIN_PX 0.2 /* narrower frames are left out */

struct fnode {
	char *name;
	uint64_t value;
	struct fnode *kids; /* array */
	size_t nkids, cap;
};

static struct fnode *child(struct fnode *n, const char *name, size_t len)
{
	struct fnode *k;
	size_t i;

	for (i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i].name) == len && !memcmp(n->kids[i].name, name, len))
			return &n->kids[i];
	if (!(k = pmt_grow(n->kids, &n->cap, n->nkids, sizeof(*k), 4)))
		return NULL;
	n->kids = k;
	k = &n->kids[n->nkids];
	memset(k, 0, sizeof(*k));
	k->name = strndup(name, len);
	if (!k->name)
		return NULL;
	n->nkids++;
	return k;
}

static void free_tree(struct fnode *n)
{
	size_t i;

	for (i = 0; i < n->nkids; i++)
		free_tree(&n->kids[i]);
	free(n->kids);
	free(n->name);
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct fnode *)a)->name, ((const struct fnode *)b)->name);
}

static int depth_of(struct fnode *n)
{
	int d = 0, k;
	size_t i;

	if (n->nkids > 1)
		pmt_sort(n->kids, n->nkids, sizeof(*n->kids), cmp_node);
	for (i = 0; i < n->nkids; i++)
		if ((k = depth_of(&n->kids[i])) > d)
			d = k;
	return d + 1;
}

/* Warm colours from the name, the same name always the same colour. */
static void colour(const char *name, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = 80 + (int)((h >> 8) % 150);
	*b = (int)((h >> 16) % 55);
}

static void xml_text(struct pmt_buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '<': pmt_buf__puts(b, "&lt;"); break;
		case '>': pmt_buf__puts(b, "&gt;"); break;
		case '&': pmt_buf__puts(b, "&amp;"); break;
		case '"': pmt_buf__puts(b, "&quot;"); break;
		default:
			/* control bytes are not allowed in XML */
			pmt_buf__putc(b, (unsigned char)s[i] < 0x20 ? '?' : s[i]);
		}
	}
}

/* The label a frame of px pixels has room for (about 7 px a char). */
static void label(struct pmt_buf *b, const char *name, double px)
{
	size_t fit = px > 6 ? (size_t)((px - 6) / 7) : 0, len = strlen(name);

	if (fit < 3)
		return;
	if (len <= fit) {
		xml_text(b, name, len);
		return;
	}
	xml_text(b, name, fit - 2);
	pmt_buf__puts(b, "..");
}

static void draw(struct pmt_buf *b, const struct fnode *n, uint64_t total, uint64_t before,
		 int depth, int height)
{
	double fx = (double)before / (double)total, fw = (double)n->value / (double)total;
	double px = fw * (WIDTH - 2 * PAD), x = PAD + fx * (WIDTH - 2 * PAD);
	int y = height - ROW * (depth + 1) - 4, r, g, bl;
	uint64_t off = before;
	size_t i;

	if (px < MIN_PX)
		return;
	colour(n->name, &r, &g, &bl);
	pmt_buf__printf(b, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-c=\"%llu\"><title>",
			fx, fw, (unsigned long long)n->value);
	xml_text(b, n->name, strlen(n->name));
	pmt_buf__printf(b, " (%llu samples, %.2f%%)</title>", (unsigned long long)n->value,
			100.0 * fw);
	pmt_buf__printf(b,
			"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
			x, y, px, ROW - 1, r, g, bl, x + 3, y + ROW - 4);
	label(b, n->name, px);
	pmt_buf__puts(b, "</text></g>\n");
	for (i = 0; i < n->nkids; i++) {
		draw(b, &n->kids[i], total, off, depth + 1, height);
		off += n->kids[i].value;
	}
}

/* Hover: details line. Click: zoom so the frame fills the width (its
 * ancestors stretch, others hide). Reset: back to all. */
static const char script[] =
	"var det,frames,zoomed=null;\n"
	"function init(){det=document.getElementById('details');"
	"frames=document.querySelectorAll('g.f');"
	"frames.forEach(function(g){g.onmouseover=function(){det.textContent=g.querySelector('title').textContent;};"
	"g.onmouseout=function(){det.textContent=' ';};g.onclick=function(){zoom(g);};});"
	"document.getElementById('reset').onclick=function(){zoom(null);};"
	"document.getElementById('search').onclick=search;}\n"
	"function fit(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text'),"
	"name=g.querySelector('title').textContent.replace(/ \\([0-9]+ samples.*$/,''),"
	"n=Math.floor((w-6)/7);r.setAttribute('x',x);r.setAttribute('width',w);t.setAttribute('x',x+3);"
	"t.textContent=n<3?'':name.length<=n?name:name.substr(0,n-2)+'..';}\n"
	"function zoom(z){zoomed=z;var zx=z?+z.dataset.x:0,zw=z?+z.dataset.w:1,zy=z?+z.querySelector('rect').getAttribute('y'):1e9;"
	"frames.forEach(function(g){var x=+g.dataset.x,w=+g.dataset.w,y=+g.querySelector('rect').getAttribute('y'),"
	"inside=x>=zx-1e-12&&x+w<=zx+zw+1e-12,below=y>zy&&x<=zx+1e-12&&x+w>=zx+zw-1e-12;"
	"if(!z||inside||below){g.style.display='';var a=Math.max(x,zx),b=Math.min(x+w,zx+zw);"
	"fit(g,P+(a-zx)/zw*(W-2*P),(b-a)/zw*(W-2*P));}else{g.style.display='none';}});"
	"document.getElementById('reset').style.opacity=z?1:0.3;}\n"
	"function search(){var q=prompt('Highlight frames matching (regular expression):');if(q===null)return;"
	"var re=new RegExp(q),hit=0,tot=+frames[0].dataset.c;frames.forEach(function(g){"
	"var name=g.querySelector('title').textContent,r=g.querySelector('rect');"
	"if(q&&re.test(name)){r.setAttribute('data-fill',r.getAttribute('data-fill')||r.getAttribute('fill'));"
	"r.setAttribute('fill','rgb(190,80,230)');}else if(r.getAttribute('data-fill')){r.setAttribute('fill',r.getAttribute('data-fill'));}});"
	"det.textContent=q?'highlighted: '+q:' ';}\n";

int pmt_flame__svg(struct pmt_buf *b, const struct pmt_flame_stack *st, size_t n, const char *title)
{
	struct fnode root = {0};
	const char *p, *semi;
	struct fnode *cur;
	size_t i;
	int depth, height;

	root.name = strdup("all");
	if (!root.name)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		root.value += st[i].count;
		cur = &root;
		for (p = st[i].folded; cur && *p; p = *semi ? semi + 1 : semi) {
			semi = strchr(p, ';');
			if (!semi)
				semi = p + strlen(p);
			cur = child(cur, p, (size_t)(semi - p));
			if (cur)
				cur->value += st[i].count;
		}
		if (!cur) {
			free_tree(&root);
			return -ENOMEM;
		}
	}
	depth = depth_of(&root);
	height = TOP + ROW * depth + 8;
	pmt_buf__printf(
		b,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
		"#title{font-size:17px;text-anchor:middle}#reset,#search{cursor:pointer}</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n",
		(int)WIDTH, height, (int)WIDTH, height);
	/* the layout's constants, then the script */
	pmt_buf__printf(b, "var W=%g,P=%g;\n", WIDTH, PAD);
	pmt_buf__puts(b, script);
	pmt_buf__printf(b,
			"]]></script>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
			"<text id=\"title\" x=\"%g\" y=\"22\">",
			WIDTH / 2);
	xml_text(b, title, strlen(title));
	pmt_buf__printf(
		b,
		" (%llu samples)</text>\n"
		"<text id=\"reset\" x=\"%g\" y=\"22\" style=\"opacity:0.3\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%g\" y=\"22\">Search</text>\n"
		"<text id=\"details\" x=\"%g\" y=\"40\"> </text>\n",
		(unsigned long long)root.value, PAD, WIDTH - PAD - 50, PAD);
	if (root.value)
		draw(b, &root, root.value, 0, 0, height);
	pmt_buf__puts(b, "</svg>\n");
	free_tree(&root);
	return 0;
}

int pmt_flame__write_file(const char *path, const struct pmt_flame_stack *st, size_t n,
			  const char *title)
{
	struct pmt_buf b = {0};
	size_t off = 0;
	ssize_t w;
	int fd, err = pmt_flame__svg(&b, st, n, title);

	if (err)
		return err;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		pmt_buf__free(&b);
		return err;
	}
	while (off < b.len) {
		w = write(fd, b.p + off, b.len - off);
		if (w < 0) {
			err = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (close(fd) && !err)
		err = -errno;
	pmt_buf__free(&b);
	return err;
}
