/*
 * fuzz_lever.c - bytes the levers read from outside: an HTTP status line
 * from the gateway's control socket (gwctl_http_status), an external
 * lever's stdout (lever_ext_parse), /proc/<pid>/cgroup
 * (lever_cgroup_parse) and /proc/self/mountinfo (lever_mountinfo_cgroup).
 * Byte 0 picks the output buffer sizes.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct errbuf e = { 0 };
	size_t dmax, blen;
	char *buf, *detail, *path, *mnt, *root;
	bool ok;
	int st, version, v;

	if (size < 1)
		return 0;
	dmax = (size_t)(data[0] & 0x3f) + 1;
	blen = size - 1;
	buf = xmalloc(blen > 0 ? blen : 1);
	memcpy(buf, data + 1, blen);

	st = gwctl_http_status(buf, blen);
	if (st != -1 && st != 0 && (st < 100 || st > 599))
		abort();

	/* exactly dmax bytes each: writing past them is caught */
	detail = xmalloc(dmax);
	if (lever_ext_parse(buf, blen, &ok, detail, dmax, &e) == 0) {
		if (strlen(detail) >= dmax)
			abort();
		fz_assert_inert("lever_ext_parse detail", detail);
	}

	path = xmalloc(dmax);
	if (lever_cgroup_parse(buf, blen, &version, path, dmax, &e) == 0) {
		if ((version != 1 && version != 2) || strlen(path) >= dmax)
			abort();
	}
	mnt = xmalloc(dmax);
	root = xmalloc(dmax);
	for (v = 1; v <= 2; v++)
		if (lever_mountinfo_cgroup(buf, blen, v, mnt, dmax, root,
		    dmax) == 0 && (strlen(mnt) >= dmax || strlen(root) >= dmax))
			abort();
	free(root);
	free(mnt);
	free(path);
	free(detail);
	free(buf);
	return 0;
}
