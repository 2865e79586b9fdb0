/*
 * cmd_engine.c - ares engine [--json FILE|-] (docs/cli-engine.md).
 *
 * Which engine DOCKER_HOST names and how it is reached (unix socket, TLS,
 * plaintext opted in), its version and negotiated API version, how many
 * containers and networks carry an ares.run label there, and whether labs
 * can run on it (local engine only, docs/engine.md).  Talks to the API
 * only, so it works on a remote engine.
 * Exit codes: 0 the engine answered, 2 usage or a bad / refused
 * DOCKER_HOST, 3 engine unreachable (or its TLS refused), 5 a listing
 * failed.
 */
#include "core.h"
#include "tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_engine_exec(const struct cmd_entry *, int, char **);

static const struct option cmd_engine_longopts[] = {
	{ "json", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_entry cmd_engine_entry = {
	.name = "engine",
	.optstring = "h",
	.longopts = cmd_engine_longopts,
	.summary = "show the engine DOCKER_HOST names, how it is reached, "
	    "what runs there",
	.usage = "usage: ares engine [--json FILE|-]\n",
	.exec = cmd_engine_exec,
};

/* The number of items of an array of the engine's, or -1 + e. */
static int
cmd_engine_count(cJSON *arr)
{
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;

	cJSON_Delete(arr);
	return n;
}

/* ares engine [--json FILE|-]: see the file comment for the exit codes. */
static int
cmd_engine_exec(const struct cmd_entry *self, int argc, char **argv)
{
	struct errbuf e = { 0 };
	struct docker *d;
	const char *json = NULL;
	FILE *out = stdout;
	int c, rc, nc, nn;
	bool remote;

	optind = 1;
	while ((c = cmd_getopt(self, argc, argv, &rc)) != -1) {
		switch (c) {
		case CMD_OPT_EXIT:
			return rc;
		case 'j':
			json = optarg;
			break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ares engine: unexpected argument '%s'\n%s",
		    argv[optind], self->usage);
		return EXIT_USAGE;
	}
	if (json != NULL && strcmp(json, "-") == 0)
		out = stderr;   /* stdout carries the JSON */
	d = docker_connect(NULL, &e);
	if (d == NULL) {
		fprintf(stderr, "ares engine: %s\n", e.msg);
		return errbuf_exit_code(&e);
	}
	nc = cmd_engine_count(docker_containers_by_label(d, "ares.run", &e));
	nn = nc < 0 ? -1 :
	    cmd_engine_count(docker_networks_by_label(d, "ares.run", &e));
	if (nc < 0 || nn < 0) {
		fprintf(stderr, "ares engine: listing ares objects: %s\n",
		    e.msg[0] ? e.msg : "not an array");
		docker_close(d);
		return e.code == ERRBUF_NONE ? EXIT_INTERNAL :
		    errbuf_exit_code(&e);
	}
	remote = docker_is_remote(d);
	fprintf(out, "engine    %s (%s, %s)\n", docker_where(d),
	    remote ? "remote" : "local", docker_transport_name(d));
	if (docker_tls_ca(d) != NULL)
		fprintf(out, "tls       ca %s, client certificate %s (engine's "
		    "certificate and name verified)\n", docker_tls_ca(d),
		    docker_tls_cert(d));
	fprintf(out, "version   %s (API %s)\n", docker_engine_version(d),
	    docker_api_version(d));
	fprintf(out, "ares      %d container(s), %d network(s) with an "
	    "ares.run label\n", nc, nn);
	fprintf(out, "labs      %s\n", docker_is_podman(d) ? "refused: "
	    "podman engine, its bridges cannot be sealed before a container "
	    "joins them (docs/engine.md)" : remote ? "yes, remote: volumes "
	    "and the archive API instead of bind mounts, no host firewall, "
	    "events judged by receipt time; what needs this machine's paths "
	    "or kernel is refused (docs/engine.md)" : "yes");
	if (json != NULL) {
		cJSON *j = cJSON_CreateObject();

		cJSON_AddStringToObject(j, "engine", docker_where(d));
		cJSON_AddStringToObject(j, "transport",
		    docker_transport_name(d));
		cJSON_AddBoolToObject(j, "remote", remote);
		cJSON_AddBoolToObject(j, "tls", docker_tls_ca(d) != NULL);
		cJSON_AddStringToObject(j, "version", docker_engine_version(d));
		cJSON_AddStringToObject(j, "api", docker_api_version(d));
		cJSON_AddNumberToObject(j, "ares_containers", nc);
		cJSON_AddNumberToObject(j, "ares_networks", nn);
		cJSON_AddBoolToObject(j, "podman", docker_is_podman(d));
		cJSON_AddBoolToObject(j, "labs", !docker_is_podman(d));
		if (cmd_json_write(j, json, &e) == -1) {
			fprintf(stderr, "ares engine: %s\n", e.msg);
			docker_close(d);
			return errbuf_exit_code(&e);
		}
	}
	docker_close(d);
	return EXIT_CONTAINED;
}
