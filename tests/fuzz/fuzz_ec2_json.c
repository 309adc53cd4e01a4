/* fuzz_ec2_json.c - AWS CLI JSON exports read by plan/inventory --from-aws-json:
 * describe-volumes, describe-volumes-modifications, describe-instances, describe-instance-types
 * (aws_ec2_load_export), then the joins done after loading (modifications and instance types
 * onto volumes) and the writers that save them again. */
#include "ebsmigrate/aws_ec2.h"
#include "ebsmigrate/buf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct fleet f;
	fleet_init(&f);
	struct ec2_mod_list mods;
	memset(&mods, 0, sizeof mods);
	struct buf err = BUF_INIT, out = BUF_INIT;
	if (aws_ec2_load_export(&f, &mods, (const char *)data, size, "fuzz.json", "acct", &err) > 0) {
		aws_ec2_attach_mods(&f, &mods);
		aws_ec2_apply_instances(&f);
		for (size_t i = 0; i < f.n; i++)
			if (f.vols[i].region)
				aws_ec2_write_volumes_export(&out, &f, f.vols[i].region, NULL);
		aws_ec2_write_instance_types_export(&out, &f);
	}
	buf_release(&out);
	buf_release(&err);
	ec2_mod_list_release(&mods);
	fleet_release(&f);
	return 0;
}
