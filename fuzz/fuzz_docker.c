/*
 * fuzz_docker.c - what the Docker Engine answers: docker_error_message on
 * an error body, docker_version_pick / docker_version_cmp on the
 * advertised versions, docker_host_parse on a DOCKER_HOST, docker_demux
 * on an exec/attach stream and the inspect helpers on an inspect document.
 *
 * Input: byte 0 picks the bound of docker_demux (and the HTTP status);
 * the rest is the body / stream / document.  For the versions the rest is
 * split at the first NUL or newline into ApiVersion and MinAPIVersion.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct docker_exec_result r;
	struct errbuf e = { 0 };
	const char *body;
	size_t blen, cut;
	char out[16], *a, *b, *m;
	cJSON *j;
	char *buf;

	if (size < 1)
		return 0;
	blen = size - 1;
	buf = xmalloc(blen + 1);
	memcpy(buf, data + 1, blen);
	buf[blen] = '\0';
	body = buf;

	/* error body: the message must be inert text */
	m = docker_error_message(400 + data[0], body, blen);
	fz_assert_inert("docker_error_message", m);
	free(m);

	/* versions */
	for (cut = 0; cut < blen && body[cut] != '\0' && body[cut] != '\n';
	    cut++)
		;
	a = xstrndup(body, cut);
	b = cut < blen ? xstrndup(body + cut + 1, blen - cut - 1) : NULL;
	if (docker_version_pick(a, b, out, &e) == 0) {
		if (docker_version_cmp(out, DOCKER_API_MIN) < 0 ||
		    docker_version_cmp(out, DOCKER_API_MAX) > 0 ||
		    docker_version_cmp(out, a) > 0)
			abort();
	} else if (e.code != ERRBUF_ENGINE)
		abort();
	(void)docker_version_cmp(a, b);
	(void)docker_version_cmp(b, a);
	free(a);
	free(b);

	/* the body as a DOCKER_HOST */
	{
		struct docker_host h;
		char *v = xstrndup(body, blen);

		memset(&e, 0, sizeof e);
		if (docker_host_parse(v, "DOCKER_HOST", &h, &e) == 0) {
			if (h.kind == DOCKER_UNIX ? h.path[0] != '/' :
			    (h.name[0] == '\0' || h.name[0] == '-' ||
			    h.user[0] == '-' || h.port < 0 || h.port > 65535 ||
			    strpbrk(h.name, " /@?#\n") != NULL))
				abort();
		} else if (e.code != ERRBUF_INPUT ||
		    strstr(e.msg, "DOCKER_HOST") == NULL)
			abort();
		free(v);
	}

	/* exec stream */
	memset(&r, 0, sizeof r);
	{
		size_t max = (size_t)data[0] * 16;

		if (docker_demux(body, blen, max, &r, &e) == 0) {
			if (r.out == NULL || r.err == NULL ||
			    r.out_len > max || r.err_len > max ||
			    r.out_len + r.err_len > blen)
				abort();
		}
		docker_exec_result_free(&r);
	}

	/* an inspect document */
	j = cJSON_ParseWithLength(body, blen);
	if (j != NULL) {
		char *ip;

		(void)docker_inspect_running(j);
		(void)docker_inspect_paused(j);
		(void)docker_inspect_pid(j);
		(void)docker_inspect_network_count(j);
		ip = docker_container_ip(j, "lab");
		free(ip);
		cJSON_Delete(j);
	}
	free(buf);
	return 0;
}
