/* test_scope.c - the scoping flags' meaning: kinds AND, values of one kind OR, -A over -n,
 * volumes without a PVC under -n/-l, --account and --region on volumes without them, and
 * scope_filter_fleet (kept volumes, the index, unknown namespaces). */
#include <stdlib.h>
#include <string.h>

#include "ebsmigrate/common.h"
#include "ebsmigrate/scope.h"
#include "tap.h"

static struct kv team_pay[] = {{"team", "payments"}, {"app", "db"}};

static struct volume *add(struct fleet *f, const char *id, const char *region, const char *account, const char *cluster,
			  const char *ns, const char *pvc, struct kv *labels, size_t n_labels)
{
	struct volume *v = fleet_add_volume(f, id);
	v->region = xstrdup(region);
	v->account = account ? xstrdup(account) : NULL;
	if (cluster) {
		v->kube = xcalloc(1, sizeof *v->kube);
		v->kube->cluster = xstrdup(cluster);
		v->kube->pv = xstrdup("pv");
		v->kube->namespace_ = ns ? xstrdup(ns) : NULL;
		v->kube->pvc = pvc ? xstrdup(pvc) : NULL;
		v->kube->labels = xcalloc(n_labels ? n_labels : 1, sizeof *v->kube->labels);
		for (size_t i = 0; i < n_labels; i++) {
			v->kube->labels[i].key = xstrdup(labels[i].key);
			v->kube->labels[i].value = xstrdup(labels[i].value);
		}
		v->kube->n_labels = n_labels;
	}
	return v;
}

static void fill(struct fleet *f)
{
	fleet_init(f);
	add(f, "vol-1", "us-east-1", "111111111111", "prod", "pay", "data-0", team_pay, 2);
	add(f, "vol-2", "us-east-1", NULL, "prod", "web", "cache", NULL, 0);
	add(f, "vol-3", "eu-west-1", "222222222222", NULL, NULL, NULL, NULL, 0);     /* outside Kubernetes */
	add(f, "vol-4", "eu-west-1", "222222222222", "legacy", NULL, NULL, NULL, 0); /* unbound PV */
}

/* The ids a scope keeps, joined by spaces. */
static char *kept(struct scope *s)
{
	struct fleet f;
	fill(&f);
	struct scope_stats st;
	scope_filter_fleet(s, &f, &st);
	struct buf b = BUF_INIT;
	buf_adds(&b, "");
	for (size_t i = 0; i < f.n; i++) {
		buf_addf(&b, "%s%s", i ? " " : "", f.vols[i].volume_id);
		CHECK(fleet_find(&f, f.vols[i].volume_id) == &f.vols[i]); /* the index follows */
	}
	CHECK_I64(st.kept, f.n);
	CHECK_I64(st.before, 4);
	scope_stats_release(&st);
	fleet_release(&f);
	return buf_detach(&b);
}

#define EXPECT(s, want)                                                                                            \
	do {                                                                                                       \
		char *got_ = kept(s);                                                                              \
		CHECK_STR(got_, want);                                                                             \
		free(got_);                                                                                        \
	} while (0)

int main(void)
{
	struct scope s;
	struct buf err = BUF_INIT;

	memset(&s, 0, sizeof s);
	CHECK(!scope_active(&s));
	EXPECT(&s, "vol-1 vol-2 vol-3 vol-4");
	s.all_namespaces = 1;
	CHECK(!scope_active(&s)); /* -A alone filters nothing */
	EXPECT(&s, "vol-1 vol-2 vol-3 vol-4");
	scope_release(&s);

	scope_add(&s.namespaces, &s.n_namespaces, "pay");
	EXPECT(&s, "vol-1");
	scope_add(&s.namespaces, &s.n_namespaces, "web");
	EXPECT(&s, "vol-1 vol-2");
	s.all_namespaces = 1; /* -A overrides -n */
	EXPECT(&s, "vol-1 vol-2 vol-3 vol-4");
	scope_release(&s);

	CHECK(scope_set_selector(&s, "team=payments", &err) == 0);
	EXPECT(&s, "vol-1");
	CHECK(scope_set_selector(&s, "!team", &err) == 0);
	EXPECT(&s, "vol-2"); /* never a volume without a PVC */
	CHECK(scope_set_selector(&s, "team in (", &err) == EM_EINPUT);
	CHECK(s.selector_text == NULL);
	scope_release(&s);

	scope_add(&s.accounts, &s.n_accounts, "222222222222");
	EXPECT(&s, "vol-3 vol-4");
	scope_add(&s.regions, &s.n_regions, "us-east-1");
	EXPECT(&s, ""); /* kinds AND */
	scope_release(&s);

	scope_add(&s.contexts, &s.n_contexts, "legacy");
	scope_add(&s.contexts, &s.n_contexts, "prod");
	EXPECT(&s, "vol-1 vol-2 vol-4");
	scope_add(&s.volumes, &s.n_volumes, "vol-2");
	scope_add(&s.volumes, &s.n_volumes, "vol-3");
	EXPECT(&s, "vol-2");
	struct buf d = BUF_INIT;
	scope_describe(&s, &d);
	CHECK_STR(d.s, "--context legacy --context prod --volume vol-2 --volume vol-3");
	buf_release(&d);
	scope_release(&s);

	/* unknown namespaces are reported, known ones not */
	scope_add(&s.namespaces, &s.n_namespaces, "nope");
	scope_add(&s.namespaces, &s.n_namespaces, "web");
	struct fleet f;
	fill(&f);
	struct scope_stats st;
	scope_filter_fleet(&s, &f, &st);
	CHECK_I64(st.n_unknown_namespaces, 1);
	CHECK_STR(st.unknown_namespaces[0], "nope");
	CHECK_I64(st.kept, 1);
	scope_stats_release(&st);
	fleet_release(&f);

	/* ledger rows: labels unknown, -l left to the caller; the other filters still apply */
	CHECK(scope_set_selector(&s, "team", &err) == 0);
	struct scope_subject row = {"vol-2", "us-east-1", NULL, "prod", "web", "cache", NULL, 0, 0};
	CHECK(scope_matches(&s, &row));
	row.labels_known = 1;
	CHECK(!scope_matches(&s, &row));
	struct scope_subject nopvc = {"vol-3", "eu-west-1", NULL, NULL, NULL, NULL, NULL, 0, 0};
	CHECK(!scope_matches(&s, &nopvc));
	scope_release(&s);
	buf_release(&err);
	return tap_done();
}
