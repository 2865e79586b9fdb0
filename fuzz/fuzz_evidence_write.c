/*
 * fuzz_evidence_write.c - the writer against the verifier.  Each input
 * line is a JSON object from outside (a sensor datagram's fields are
 * appended to the chain like this); its "type" string, when present, is
 * the event type.  Whatever evidence_append accepts must verify with
 * evidence_verify_file, with the same count and head.
 */
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup(false);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evidence_verify_result r;
	struct errbuf e = { 0 };
	struct evidence *ev;
	char *path = fz_path("evidence.jsonl");
	size_t off = 0, lines = 0;
	uint64_t t = 1;

	unlink(path);
	ev = evidence_create(path, "fuzz-run", &e);
	if (ev == NULL) {
		fprintf(stderr, "evidence_create: %s\n", e.msg);
		abort();
	}
	while (off < size && lines < 64) {
		const uint8_t *nl = memchr(data + off, '\n', size - off);
		size_t ll = nl != NULL ? (size_t)(nl - (data + off)) :
		    size - off;
		cJSON *j = cJSON_ParseWithLength((const char *)data + off, ll);
		const char *type = "fuzz";

		if (j != NULL) {
			cJSON *ty = cJSON_DetachItemFromObjectCaseSensitive(j,
			    "type");

			if (cJSON_IsString(ty))
				type = ty->valuestring;
			(void)evidence_append(ev, type, t++,
			    cJSON_IsObject(j) ? j : NULL, &e);
			cJSON_Delete(ty);
			cJSON_Delete(j);
		}
		lines++;
		off += ll + 1;
	}
	lines = evidence_count(ev);
	{
		char head[EVIDENCE_HEX_BYTES];

		snprintf(head, sizeof head, "%s", evidence_head_hex(ev));
		evidence_close(ev);
		if (evidence_verify_file(path, "fuzz-run", &r, &e) == -1) {
			fprintf(stderr, "verify: %s\n", e.msg);
			abort();
		}
		if (!r.ok || r.entries != lines || strcmp(r.head, head) != 0) {
			fprintf(stderr, "written chain does not verify: line "
			    "%zu: %s (entries %zu of %zu)\n", r.bad_line,
			    r.reason, r.entries, lines);
			abort();
		}
	}
	free(path);
	return 0;
}
