/*
 * test_visible.c - buf_add_visible, the one escaping of text meant for a terminal (issue 12
 * item 10), and the inventory table that uses it: control characters (C0, DEL, C1), invalid
 * UTF-8 and injected lines come out as visible \xHH; printable UTF-8 is kept. And
 * buf_add_markdown_cell, the same for a Markdown table cell (plan's and report's -o markdown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/buf.h"
#include "ebsmigrate/common.h"
#include "ebsmigrate/inventory_output.h"
#include "ebsmigrate/volume.h"
#include "tap.h"

static void check_escaped(void (*add)(struct buf *, const char *), const char *in, const char *want)
{
	struct buf b = BUF_INIT;
	add(&b, in);
	CHECK_STR(b.s ? b.s : "", want);
	buf_release(&b);
}

static void check_visible(const char *in, const char *want)
{
	check_escaped(buf_add_visible, in, want);
}

static int has_raw_control(const struct buf *b)
{
	for (size_t i = 0; i < b->len; i++) {
		unsigned char c = (unsigned char)b->s[i];
		if ((c < 0x20 && c != '\n') || c == 0x7f || (c == 0xc2 && i + 1 < b->len && (unsigned char)b->s[i + 1] < 0xa0))
			return 1;
	}
	return 0;
}

/* Every single byte, and runs around escapes, through the JSON and terminal escapers (which
 * share buf.c's one escaping loop with the XML and label ones): each byte is kept or becomes
 * exactly its documented escape. */
static void check_every_byte(void)
{
	for (int c = 1; c < 256; c++) {
		char in[2] = {(char)c, 0}, want[8];
		const char *esc = buf_backslash_escape((unsigned char)c);
		if (esc)
			snprintf(want, sizeof want, "%s", esc);
		else if (c < 0x20)
			snprintf(want, sizeof want, "\\u%04x", (unsigned)c);
		else
			snprintf(want, sizeof want, "%s", in);
		check_escaped(buf_add_json_escaped, in, want);
		if (c < 0x20 || c >= 0x7f) /* a lone byte >= 0x80 is not UTF-8 */
			snprintf(want, sizeof want, "\\x%02x", (unsigned)c);
		check_visible(in, c < 0x20 || c >= 0x7f ? want : in);
	}
	check_escaped(buf_add_json_escaped, "ab\x01" "cd\"e\\f\tcaf\xc3\xa9\x7f", "ab\\u0001cd\\\"e\\\\f\\tcaf\xc3\xa9\x7f");
	check_escaped(buf_add_json_escaped, "", "");
}

int main(void)
{
	check_every_byte();
	check_visible("vol-0a1", "vol-0a1");
	check_visible("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
	check_visible("a\nerror: fake\tb\r\x07\x7f", "a\\x0aerror: fake\\x09b\\x0d\\x07\\x7f");
	check_visible("csi\xc2\x9b" "2J", "csi\\xc2\\x9b2J");              /* U+009B */
	check_visible("caf\xc3\xa9 \xe2\x96\x81\xf0\x9f\x92\xbe", "caf\xc3\xa9 \xe2\x96\x81\xf0\x9f\x92\xbe"); /* kept */
	check_visible("bad\x9b\xff\xc3", "bad\\x9b\\xff\\xc3");            /* not UTF-8 */
	check_visible("over\xe0\x80\xaf", "over\\xe0\\x80\\xaf");          /* overlong */
	check_visible("", "");
	check_visible(NULL, "");

	/* a Markdown table cell: the separator, backslashes and emphasis or code markers escaped;
	 * control characters (a newline would end the row) visible, their backslash escaped too */
	check_escaped(buf_add_markdown_cell, "a|b\\|c", "a\\|b\\\\\\|c");
	check_escaped(buf_add_markdown_cell, "*bold* _it_ `code`", "\\*bold\\* \\_it\\_ \\`code\\`");
	check_escaped(buf_add_markdown_cell, "row\nnext\r\x1b[2J", "row\\\\x0anext\\\\x0d\\\\x1b[2J");
	check_escaped(buf_add_markdown_cell, "caf\xc3\xa9 \xc2\x9b \xff", "caf\xc3\xa9 \\\\xc2\\\\x9b \\\\xff");
	check_escaped(buf_add_markdown_cell, "prod/db/data-0 gp2 3000/125", "prod/db/data-0 gp2 3000/125");
	check_escaped(buf_add_markdown_cell, NULL, "");

	/* the inventory table (live only, so not reachable from a case file without a simulator) */
	struct fleet f;
	fleet_init(&f);
	struct volume *v = fleet_add_volume(&f, "vol-\x1b]0;pwned\x07");
	v->availability_zone = xstrdup("us-east-1a\x1b[2J");
	v->state = xstrdup("in-use");
	v->size_gib = 8;
	v->type = EBS_GP2;
	struct inventory_meta m = {0, "1111\x1b[31m", NULL, 0};
	struct buf out = BUF_INIT;
	inventory_write_table(&out, &f, &m, NULL);
	CHECK(!has_raw_control(&out));
	CHECK(strstr(out.s, "vol-\\x1b]0;pwned\\x07") != NULL);
	CHECK(strstr(out.s, "us-east-1a\\x1b[2J") != NULL);
	buf_release(&out);
	fleet_release(&f);
	return tap_done();
}
