/*
 * cmd_doc.c - reading the command tables for documents other than `help`: the values an
 * option's help text enumerates, the positional words of usage lines, and manual pages.
 *
 * Entry points: cmd_option_values, cmd_positional_words, cmd_man_page (cmd_doc.h).
 * Invariant: everything here is derived from commands[] and the cmd_help/cmd_option tables
 * that `ebsmigrate help` prints, never from a second list, so completions and man pages say
 * what help says. Nothing here prints.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cmd_doc.h"
#include "ebsmigrate/common.h"

static int is_value_char(int c)
{
	return islower(c) || isdigit(c) || c == '-' || c == '_' || c == '.';
}

/* Skips a "scope: " prefix of command words ("show, list, diff: ", "run: ", "--manifests: "). */
static const char *skip_scope(const char *h)
{
	const char *colon = strstr(h, ": ");
	if (!colon)
		return h;
	for (const char *p = h; p < colon; p++)
		if (!is_value_char((unsigned char)*p) && *p != ',' && *p != ' ')
			return h;
	return colon + 2;
}

size_t cmd_option_values(const struct cmd_option *o, cmd_word *out, size_t max)
{
	if (!o || o->arg != ARG_REQUIRED || !o->help)
		return 0;
	const char *p = skip_scope(o->help);
	size_t n = 0;
	int saw_default = 0;
	for (;;) {
		size_t len = 0;
		while (is_value_char((unsigned char)p[len]))
			len++;
		if (len == 0 || len >= CMD_WORD_MAX || !islower((unsigned char)p[0]))
			break;
		if (n < max) {
			memcpy(out[n], p, len);
			out[n][len] = '\0';
		}
		n++;
		p += len;
		if (*p == ' ' && p[1] == '(') { /* a remark: "(default)", "(plan order)" */
			const char *close = strchr(p, ')');
			if (!close)
				break;
			for (const char *d = p + 2; d + 7 <= close; d++)
				saw_default |= strncmp(d, "default", 7) == 0;
			p = close + 1;
		}
		if (strncmp(p, ", or ", 5) == 0)
			p += 5;
		else if (strncmp(p, ", ", 2) == 0)
			p += 2;
		else if (strncmp(p, " or ", 4) == 0)
			p += 4;
		else
			break;
	}
	if (n < 2 || !saw_default)
		return 0;
	return n < max ? n : max;
}

size_t cmd_positional_words(const struct cmd *c, cmd_word *out, size_t max, int *takes_command)
{
	size_t n = 0;
	*takes_command = 0;
	if (!c->help || !c->help->usage)
		return 0;
	for (size_t i = 0; c->help->usage[i]; i++) {
		const char *u = c->help->usage[i];
		if (strncmp(u, "[COMMAND]", 9) == 0 || strncmp(u, "COMMAND", 7) == 0)
			*takes_command = 1;
		size_t tok = strcspn(u, " ");
		const char *p = u;
		while (p < u + tok) {
			size_t len = strcspn(p, "| ");
			if (p + len > u + tok)
				len = (size_t)(u + tok - p);
			int ok = len > 0 && len < CMD_WORD_MAX && islower((unsigned char)p[0]);
			for (size_t k = 0; ok && k < len; k++)
				ok = is_value_char((unsigned char)p[k]);
			if (!ok)
				break;
			int dup = 0;
			for (size_t k = 0; k < n && k < max; k++)
				dup |= strlen(out[k]) == len && strncmp(out[k], p, len) == 0;
			if (!dup && n < max) {
				memcpy(out[n], p, len);
				out[n][len] = '\0';
				n++;
			}
			p += len;
			if (*p == '|')
				p++;
		}
	}
	return n;
}

const char *cmd_doc_page(const char *name)
{
	/* commands documented together with another, or in a page named after their subject */
	static const char *const shared[][2] = {
		{"iam-policy", "docs/policy.md"}, {"rbac", "docs/policy.md"},    {"help", "docs/help.md"},
		{"version", "docs/help.md"},      {"completion", "docs/help.md"}, {"db", "docs/database.md"},
	};
	static char page[96];
	for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
		if (strcmp(name, shared[i][0]) == 0)
			return shared[i][1];
	snprintf(page, sizeof page, "docs/%s.md", name);
	return page;
}

/* roff text: a backslash is \e, a '-' is \- (so options copy and paste as ASCII), and a line
 * starting with '.' or '\'' is protected by \&. */
static void roff_text(struct buf *b, const char *s, size_t len)
{
	int line_start = b->len == 0 || b->s[b->len - 1] == '\n';
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		if (line_start && (ch == '.' || ch == '\''))
			buf_adds(b, "\\&");
		if (ch == '\\')
			buf_adds(b, "\\e");
		else if (ch == '-')
			buf_adds(b, "\\-");
		else
			buf_addf(b, "%c", ch);
		line_start = ch == '\n';
	}
}

static void roff_line(struct buf *b, const char *s)
{
	roff_text(b, s, strlen(s));
	buf_adds(b, "\n");
}

/* Paragraphs (blank-line separated); lines indented by two spaces are examples, kept as set. */
static void roff_paragraphs(struct buf *b, const char *text)
{
	const char *p = text;
	int in_example = 0, para_open = 1;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0) {
			if (in_example) {
				buf_adds(b, ".fi\n.RE\n");
				in_example = 0;
			}
			para_open = 0;
		} else {
			int example = len > 2 && p[0] == ' ' && p[1] == ' ';
			if (example && !in_example) {
				buf_adds(b, ".RS 4\n.nf\n");
				in_example = 1;
			} else if (!example && in_example) {
				buf_adds(b, ".fi\n.RE\n");
				in_example = 0;
			}
			if (!para_open && !example) {
				buf_adds(b, ".PP\n");
				para_open = 1;
			}
			const char *q = example ? p + 2 : p;
			if (!example)
				while (*q == ' ' && q < p + len)
					q++;
			roff_text(b, q, len - (size_t)(q - p));
			buf_adds(b, "\n");
		}
		p += len + (e != NULL);
	}
	if (in_example)
		buf_adds(b, ".fi\n.RE\n");
}

static void roff_options(struct buf *b, const char *title, const struct cmd_option *o)
{
	if (!o || !o[0].long_name)
		return;
	buf_addf(b, ".SH %s\n", title);
	for (size_t i = 0; o[i].long_name; i++) {
		buf_adds(b, ".TP\n");
		if (o[i].short_name)
			buf_addf(b, "\\fB\\-%c\\fR, ", o[i].short_name);
		buf_adds(b, "\\fB\\-\\-");
		roff_text(b, o[i].long_name, strlen(o[i].long_name));
		buf_adds(b, "\\fR");
		if (o[i].arg == ARG_REQUIRED) {
			const char *a = o[i].arg_name ? o[i].arg_name : "VALUE";
			buf_adds(b, " \\fI");
			roff_text(b, a, strlen(a));
			buf_adds(b, "\\fR");
		}
		buf_adds(b, "\n");
		roff_line(b, o[i].help);
	}
}

static void roff_exit_status(struct buf *b, const char *extra)
{
	buf_adds(b, ".SH EXIT STATUS\n"
		    ".TP\n.B 0\nsuccess\n.TP\n.B 1\nruntime error\n.TP\n.B 2\nusage error or bad input\n"
		    ".TP\n.B 3\npartial: some of the work was done, the rest can be retried\n"
		    ".TP\n.B 4\nverification failed\n"
		    ".TP\n.B 5\nnot verified: the evidence could not prove it either way\n"
		    ".TP\n.B 130, 143\nstopped by SIGINT, SIGTERM: nothing half-written, nothing recorded but what was "
		    "complete\n");
	if (extra) {
		buf_adds(b, ".PP\n");
		roff_paragraphs(b, extra);
	}
}

void cmd_man_page(struct buf *b, const struct cmd *c, const char *date)
{
	if (!c) {
		buf_addf(b, ".TH EBSMIGRATE 1 \"%s\" \"ebsmigrate %s\" \"User Commands\"\n", date, EM_VERSION);
		buf_adds(b, ".SH NAME\nebsmigrate \\- move Kubernetes EBS volumes from gp2 to gp3 safely\n"
			    ".SH SYNOPSIS\n.B ebsmigrate\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] "
			    "[\\fIARGS\\fR]\n.br\n.B kubectl ebsmigrate\n\\fICOMMAND\\fR ...\n"
			    ".SH DESCRIPTION\n"
			    "ebsmigrate reads the EBS volumes of Kubernetes clusters from the AWS and Kubernetes APIs "
			    "(or from exports), plans their move from gp2 to gp3 with cost and savings, applies the "
			    "plan in safe batches, and proves the money and the speed.\n"
			    ".PP\nGlobal options may also follow the command. Installed as "
			    "\\fBkubectl\\-ebsmigrate\\fR, it works as a kubectl plugin.\n"
			    ".SH COMMANDS\n");
		for (const struct cmd *k = cmd_list(); k->name; k++) {
			buf_addf(b, ".TP\n.BR ebsmigrate\\-%s (1)\n", k->name);
			roff_line(b, k->summary);
		}
		roff_options(b, "GLOBAL OPTIONS", cmd_global_options());
		roff_exit_status(b, NULL);
		buf_adds(b, ".SH ENVIRONMENT\n"
			    ".TP\n.B XDG_STATE_HOME\nthe default database is $XDG_STATE_HOME/ebsmigrate/ebsmigrate.db\n"
			    ".TP\n.B NO_COLOR\nwhen set and not empty, no colour\n"
			    ".TP\n.B KUBECONFIG\nthe kubeconfig files to read (default ~/.kube/config)\n"
			    ".TP\n.BR AWS_PROFILE \", \" AWS_REGION \", \" AWS_ACCESS_KEY_ID \", ...\"\n"
			    "AWS credentials and region, as the AWS CLI reads them\n"
			    ".TP\n.B EBSMIGRATE_DEBUG\nwhen set, debug diagnostics on stderr\n"
			    ".SH SEE ALSO\n");
		for (const struct cmd *k = cmd_list(); k->name; k++)
			buf_addf(b, ".BR ebsmigrate\\-%s (1)%s\n", k->name, k[1].name ? "," : "");
		buf_adds(b, ".PP\nThe full reference: docs/README.md in the source tree.\n");
		return;
	}
	char upper[64];
	size_t i = 0;
	for (; c->name[i] && i + 1 < sizeof upper; i++)
		upper[i] = (char)toupper((unsigned char)c->name[i]);
	upper[i] = '\0';
	const struct cmd_help *h = c->help;
	buf_addf(b, ".TH EBSMIGRATE\\-%s 1 \"%s\" \"ebsmigrate %s\" \"User Commands\"\n", upper, date, EM_VERSION);
	buf_addf(b, ".SH NAME\nebsmigrate\\-%s \\- ", c->name);
	roff_line(b, c->summary);
	buf_adds(b, ".SH SYNOPSIS\n");
	for (size_t k = 0; h && h->usage && h->usage[k]; k++) {
		if (k)
			buf_adds(b, ".br\n");
		buf_addf(b, ".B ebsmigrate %s\n", c->name);
		if (h->usage[k][0])
			roff_line(b, h->usage[k]);
	}
	if (!h || !h->usage)
		buf_addf(b, ".B ebsmigrate %s\n", c->name);
	if (h && h->description) {
		buf_adds(b, ".SH DESCRIPTION\n");
		roff_paragraphs(b, h->description);
	}
	if (h) {
		roff_options(b, "OPTIONS", h->options);
		roff_options(b, "LIVE INVENTORY OPTIONS", h->shared);
	}
	roff_options(b, "GLOBAL OPTIONS", cmd_global_options());
	roff_exit_status(b, h ? h->exit_codes : NULL);
	buf_addf(b, ".SH SEE ALSO\n.BR ebsmigrate (1)\n.PP\nThe full reference: %s in the source tree.\n",
		 cmd_doc_page(c->name));
}
