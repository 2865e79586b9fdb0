/*
 * fuzz_sanitize.c - util_sanitize: the output never holds ESC, another C0
 * control (but '\n' with keep_nl), DEL, a C1 code point or invalid UTF-8;
 * it stays within dstlen (NUL included); it is idempotent.
 *
 * Input: byte 0 picks dstlen (1..256, or a large buffer) and keep_nl.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t dstlen, n, n2;
	bool keep_nl;
	char *dst, *src, *again;

	if (size < 1)
		return 0;
	keep_nl = data[0] & 1;
	dstlen = (data[0] >> 1) == 0x7f ? 3 * size + 8 :
	    (size_t)(data[0] >> 1) * 2 + 1;
	src = xmalloc(size - 1 > 0 ? size - 1 : 1);
	memcpy(src, data + 1, size - 1);
	/* exactly dstlen bytes: writing past them is caught */
	dst = xmalloc(dstlen);
	n = util_sanitize(dst, dstlen, src, size - 1, keep_nl);
	if (n >= dstlen || dst[n] != '\0' || strlen(dst) != n) {
		fprintf(stderr, "util_sanitize: returned %zu, dstlen %zu\n", n,
		    dstlen);
		abort();
	}
	fz_assert_inert_n("util_sanitize", dst, n, keep_nl);
	/* sanitized text is a fixed point */
	again = xmalloc(n + 1);
	n2 = util_sanitize(again, n + 1, dst, n, keep_nl);
	if (n2 != n || memcmp(again, dst, n) != 0) {
		fprintf(stderr, "util_sanitize: not idempotent\n");
		abort();
	}
	free(again);
	free(dst);
	free(src);
	return 0;
}
