/*
 * test_remote_lab.c - a whole lab on a remote engine (DOCKER_HOST tcp+TLS
 * or ssh; remote_engine.sh runs it against its TLS engine), brought up by
 * lab_up: no container has a bind mount (only volumes), the sensors'
 * bus keys are in no container's configuration, the agent's home is a
 * read-only volume holding the planted bait and its script a read-only
 * volume holding the policy's bytes, the sensors' lines reach a bus
 * socket here through bus_stream_start with lab->bus_srcs (the bait the
 * scripted agent used, its DNS query), the gateway answers through
 * gwctl_exec, lab.json says engine, clock, seal and input_drop, the
 * chains come out with lab_evidence_pull into RUN_DIR/evidence and
 * verify, and lab_teardown leaves no container, network or volume of the
 * run.  And what a remote lab cannot have is refused before anything is
 * made: the tripwire bait, a root agent with NET_ADMIN (no host
 * firewall there).
 *
 * Skips (exit 77) without an engine, unless ARES_REQUIRE_DOCKER=1, and
 * on a local engine (the local lab is test_drill's, test_seal's...).
 */
#include "internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

static struct docker *d;

/* The scripted attacker: reads the planted token from its home, uses it
 * against the service (until the service listens), asks the resolver
 * for a name outside, then stays up for the test's execs. */
static const char script[] =
    "#!/bin/sh\n"
    "t=$(cat /home/poyo/.config/tickets/token)\n"
    "i=0\n"
    "while [ $i -lt 60 ]; do\n"
    "  /bin/ares-lab http -H \"Authorization: Bearer $t\" "
    "http://tickets:8081/api/tickets > /tmp/out 2>&1\n"
    "  grep -q '^HTTP 200' /tmp/out && break\n"
    "  i=$((i+1)); sleep 1\n"
    "done\n"
    "echo \"bait used ($i)\"\n"
    "/bin/ares-lab shell 'nslookup exfil-remote-lab.example' >/dev/null\n"
    "echo 'dns asked'\n"
    "exec sleep 600\n";

static char *
mkscratch(void)
{
	char *dir = xstrdup("/tmp/ares-test-remote-lab.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* A policy file in dir (body after the name line); caller frees. */
static struct policy *
policy_in(const char *dir, const char *name, const char *body)
{
	char *path = xasprintf("%s/%s.yaml", dir, name);
	char *text = xasprintf("name: %s\nseed: 7\nlimits: {steps: 4, "
	    "seconds: 30}\nvariant: default\n%s", name, body);
	struct errbuf e = {0};
	struct policy *p;

	assert_int_equal(util_write_file(path, text, strlen(text), 0644, &e),
	    0);
	p = policy_load(path, &e);
	if (p == NULL)
		fail_msg("%s: %s", path, e.msg);
	free(text);
	free(path);
	return p;
}

/* Objects of run labelled ares.run=<run_id> on the engine: containers,
 * networks and volumes, summed. */
static int
objects_of(const char *run_id)
{
	char *label = xasprintf("ares.run=%s", run_id);
	struct errbuf e = {0};
	cJSON *c = docker_containers_by_label(d, label, &e);
	cJSON *n = docker_networks_by_label(d, label, &e);
	cJSON *v = docker_volumes_by_label(d, label, &e);
	int k;

	if (c == NULL || n == NULL || v == NULL)
		fail_msg("list: %s", e.msg);
	k = cJSON_GetArraySize(c) + cJSON_GetArraySize(n) +
	    cJSON_GetArraySize(v);
	cJSON_Delete(c);
	cJSON_Delete(n);
	cJSON_Delete(v);
	free(label);
	return k;
}

/* Run argv in container id: its exit code, stdout into *out (caller
 * frees; may be NULL). */
static int
exec_in(const char *id, const char *const *argv, char **out)
{
	struct docker_exec_result r;
	struct errbuf e = {0};
	int code;

	if (docker_exec(d, id, argv, NULL, 65536, &r, &e) < 0)
		fail_msg("exec: %s", e.msg);
	code = r.exit_code;
	if (out != NULL)
		*out = xstrndup(r.out, r.out_len);
	docker_exec_result_free(&r);
	return code;
}

/* Every volume a lab container mounted (anonymous ones carry no label:
 * each is looked up by name after the teardown). */
static char *vols[64];
static size_t nvols;

/* Every mount of container c is a volume (no bind), none from a host
 * path; the one at target (NULL: none looked for) is read-only/rw as
 * want_rw, and named name when name is not NULL. */
static void
check_mounts(const struct lab_container *c, const char *target,
    bool want_rw, const char *name)
{
	struct errbuf e = {0};
	cJSON *ins = docker_container_inspect(d, c->id, &e), *m;
	const cJSON *binds;
	bool seen = target == NULL;

	assert_non_null(ins);
	binds = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(ins, "HostConfig"), "Binds");
	assert_true(binds == NULL || cJSON_IsNull(binds) ||
	    cJSON_GetArraySize(binds) == 0);
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(ins, "Mounts")) {
		const char *type = util_json_str(m, "Type", "");
		const char *dst = util_json_str(m, "Destination", "");

		if (strcmp(type, "volume") != 0)
			fail_msg("%s: mount at %s is of type %s", c->role, dst,
			    type);
		if (target == NULL && nvols < 64)
			vols[nvols++] = xstrdup(util_json_str(m, "Name", ""));
		if (target != NULL && strcmp(dst, target) == 0) {
			seen = true;
			assert_int_equal(util_json_true(m, "RW"), want_rw);
			if (name != NULL)
				assert_string_equal(util_json_str(m, "Name", ""),
				    name);
		}
	}
	if (!seen)
		fail_msg("%s: no mount at %s", c->role, target);
	cJSON_Delete(ins);
}

static void
test_remote_lab(void **state)
{
	struct lab_container *cs[LAB_NROLES];
	struct bus_stream_src srcs[LAB_NROLES];
	struct bus_stream_stats bst;
	struct bus_stream *bs;
	struct errbuf e = {0};
	struct policy *p;
	struct lab *lab;
	char run_id[64], *dir, *run_dir, *sock, *out, *path, *txt, *body;
	char *home_vol, *script_vol, *json;
	size_t i, len;
	int bfd, baits = 0, dnsq = 0, st = 0;
	uint64_t t0;
	cJSON *lj;
	(void)state;

	dir = mkscratch();
	path = xasprintf("%s/attack.sh", dir);
	assert_int_equal(util_write_file(path, script, strlen(script), 0644,
	    &e), 0);
	body = xasprintf("bait: [tickets-admin-token, cloud-credentials]\n"
	    "levers: [gateway-deny]\nflaws: []\nagent: {script: %s}\n", path);
	p = policy_in(dir, "remote-lab", body);
	free(body);
	free(path);
	util_new_id(run_id);
	run_dir = xasprintf("%s/run", dir);
	assert_int_equal(util_mkdir_p(run_dir, 0700, &e), 0);
	t0 = util_mono_ns();
	lab = lab_up(d, p, run_dir, run_id, 7, &e);
	if (lab == NULL)
		fail_msg("lab up on %s: %s", docker_where(d), e.msg);
	printf("lab up on %s: %.1f s\n", docker_where(d),
	    (double)(util_mono_ns() - t0) / 1e9);
	assert_true(lab->remote);
	assert_string_equal(lab->clock, "receipt");
	assert_non_null(strstr(lab->host_seal, "read back on 3 bridge(s) by a "
	    "seal container on the remote engine"));
	assert_non_null(strstr(lab->host_seal, "no host INPUT firewall"));
	assert_non_null(strstr(lab->host_seal, "(inhibit_ipv4; not read back)"));
	/* gateway, service, sink, dns, decoys */
	assert_int_equal(lab->nbus_srcs, 5);
	assert_int_equal(lab->nchains, 5);

	/* the bus: this machine's socket, the lines over the log stream */
	sock = xasprintf("%s/bus.sock", dir);
	bfd = bus_open(sock, &e);
	assert_true(bfd >= 0);
	memset(srcs, 0, sizeof srcs);
	for (i = 0; i < lab->nbus_srcs; i++) {
		assert_non_null(lab->bus_srcs[i].id);
		srcs[i].id = lab->bus_srcs[i].id;
		srcs[i].src = lab->bus_srcs[i].src;
		srcs[i].run_id = run_id;
		memcpy(srcs[i].key, lab->bus_srcs[i].key, BUS_KEY_BYTES);
	}
	bs = bus_stream_start(d, sock, srcs, lab->nbus_srcs, &e);
	if (bs == NULL)
		fail_msg("bus stream: %s", e.msg);

	/* no bind mount anywhere; the home and the script read-only named
	 * volumes, the sensors' /evidence and the gateway's /ctl volumes */
	home_vol = xasprintf("ares-%s-home", run_id);
	script_vol = xasprintf("ares-%s-script", run_id);
	lab_listed(lab, cs);
	for (i = 0; i < LAB_NROLES; i++)
		if (cs[i]->id != NULL)
			check_mounts(cs[i], NULL, false, NULL);
	check_mounts(&lab->agent, "/home/poyo", false, home_vol);
	check_mounts(&lab->agent, "/opt/ares", false, script_vol);
	check_mounts(&lab->gateway, "/ctl", true, NULL);
	check_mounts(&lab->gateway, "/evidence", true, NULL);
	check_mounts(&lab->service, "/evidence", true, NULL);
	/* no sensor's key is in any container's configuration */
	for (i = 0; i < LAB_NROLES; i++) {
		cJSON *ins;
		size_t k;

		if (cs[i]->id == NULL)
			continue;
		ins = docker_container_inspect(d, cs[i]->id, &e);
		assert_non_null(ins);
		txt = cJSON_PrintUnformatted(ins);
		for (k = 0; k < lab->nbus_srcs; k++) {
			char hex[2 * BUS_KEY_BYTES + 1];

			util_hex(lab->bus_srcs[k].key, BUS_KEY_BYTES, hex);
			if (strstr(txt, hex) != NULL)
				fail_msg("%s's key in %s's inspect",
				    lab->bus_srcs[k].src, cs[i]->role);
		}
		assert_null(strstr(txt, "BUS_KEY="));
		free(txt);
		cJSON_Delete(ins);
	}

	/* the gateway answers through an exec in it (no host socket) */
	st = gwctl_exec(d, lab->gateway.id, NULL, "GET", "/control/health",
	    NULL, NULL, &e);
	assert_int_equal(st, 200);

	/* lab.json */
	path = xasprintf("%s/lab.json", run_dir);
	json = util_read_file(path, 1 << 20, &len, &e);
	assert_non_null(json);
	lj = cJSON_Parse(json);
	assert_non_null(lj);
	assert_true(util_json_true(cJSON_GetObjectItemCaseSensitive(lj,
	    "engine"), "remote"));
	assert_string_equal(util_json_str(cJSON_GetObjectItemCaseSensitive(lj,
	    "engine"), "where", ""), docker_where(d));
	assert_string_equal(util_json_str(lj, "clock", ""), "receipt");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(lj,
	    "input_drop")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
	    lj, "seal")), 3);
	cJSON_Delete(lj);
	free(json);
	free(path);

	/* the scripted agent, started: uses the planted token */
	assert_int_equal(lab_start_agent(d, lab, &e), 0);
	for (i = 0; i < 1200 && (baits == 0 || dnsq == 0); i++) {
		struct pollfd pfd = { .fd = bfd, .events = POLLIN };
		struct bus_event ev;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		while (bus_recv_stream(bfd, &ev, &e) == 1) {
			const char *k = bus_event_str(&ev, "kind");
			const char *src = bus_event_str(&ev, "src");

			if (strcmp(k, "bait") == 0 &&
			    strcmp(src, "service:tickets") == 0)
				baits++;
			if (strcmp(src, "dns") == 0 && strstr(ev.raw,
			    "exfil-remote-lab.example") != NULL)
				dnsq++;
			bus_event_free(&ev);
		}
	}
	if (baits == 0 || dnsq == 0) {
		char *log = docker_container_logs(d, lab->agent.id, 4096, &e);

		size_t lines = bus_stream_lines(bs);
		char *slog = docker_container_logs(d, lab->service.id, 2000, &e);

		bus_stream_stop(bs, &bst);
		fprintf(stderr, "service log: %s\nrepeated %zu lost %zu\n",
		    slog, bst.repeated, bst.lost);
		(void)lab_teardown(d, run_id, &e);
		fail_msg("bait events %d, dns events %d (stream: lines %zu, "
		    "forwarded %zu "
		    "malformed %zu stale %zu ended %zu error \"%s\"); agent log: %s", baits,
		    dnsq, lines, bst.forwarded, bst.malformed, bst.stale, bst.ended, bst.error,
		    log != NULL ? log : e.msg);
	}

	/* the home: the planted token, read-only; the script: the bytes */
	{
		char *tp = xasprintf("/home/poyo/%s", lab->v->token_path);
		const char *const cat[] = { "/bin/cat", tp, NULL };
		const char *const cats[] = { "/bin/cat", "/opt/ares/agent.sh",
		    NULL };
		const char *const wr[] = { "/bin/sh", "-c",
		    "echo x > /home/poyo/written", NULL };

		assert_int_equal(exec_in(lab->agent.id, cat, &out), 0);
		txt = xasprintf("%s\n", lab->decoy_token);
		assert_string_equal(out, txt);
		free(txt);
		free(out);
		assert_int_equal(exec_in(lab->agent.id, cats, &out), 0);
		assert_string_equal(out, script);
		free(out);
		assert_int_not_equal(exec_in(lab->agent.id, wr, NULL), 0);
		free(tp);
	}
	/* the home's top folder: RUN_DIR/agent-home's mode and owner, as
	 * a local lab's bind mount has them */
	{
		const char *const ls[] = { "/bin/sh", "-c",
		    "stat -c '%a %u %g' /home/poyo", NULL };
		char *hp = xasprintf("%s/agent-home", run_dir), *want;
		struct stat hs;

		assert_int_equal(stat(hp, &hs), 0);
		want = xasprintf("%o %u %u\n", (unsigned)(hs.st_mode & 07777),
		    (unsigned)hs.st_uid, (unsigned)hs.st_gid);
		assert_int_equal(exec_in(lab->agent.id, ls, &out), 0);
		assert_string_equal(out, want);
		free(out);
		free(want);
		free(hp);
	}

	/* the sensors stopped (as before a teardown), the stream too */
	for (i = 0; i < lab->nbus_srcs; i++)
		(void)docker_container_kill(d, lab->bus_srcs[i].id, "KILL", &e);
	for (i = 0; i < lab->nbus_srcs; i++) {
		for (int t = 0; t < 100; t++) {
			cJSON *ins = docker_container_inspect(d,
			    lab->bus_srcs[i].id, &e);
			bool running = ins != NULL && docker_inspect_running(ins);

			cJSON_Delete(ins);
			if (!running)
				break;
			usleep(100000);
		}
	}
	bus_stream_stop(bs, &bst);
	printf("bus stream via %s: forwarded %zu malformed %zu lost %zu "
	    "overlong %zu send_failed %zu\n", docker_where(d), bst.forwarded,
	    bst.malformed, bst.lost, bst.overlong, bst.send_failed);
	assert_true(bst.forwarded >= 2);
	assert_int_equal(bst.malformed, 0);
	assert_int_equal(bst.send_failed, 0);
	assert_int_equal(bst.overlong, 0);

	/* the chains, pulled into RUN_DIR/evidence, verify */
	if (lab_evidence_pull(d, lab, &e) == -1)
		fail_msg("evidence pull: %s", e.msg);
	/* its count: every file written (a chain each here, no restart) */
	assert_int_equal(lab->pulled_files, lab->nchains);
	assert_true(lab->pulled_bytes > 0);
	for (i = 0; i < lab->nchains; i++) {
		struct evidence_verify_result vr;

		path = xasprintf("%s/%s", run_dir, lab->chains[i]);
		if (evidence_verify_file(path, run_id, &vr, &e) == -1)
			fail_msg("%s: %s", path, e.msg);
		if (!vr.ok)
			fail_msg("%s does not verify", path);
		assert_true(vr.entries >= 1);
		free(path);
	}
	/* the service's chain holds the bait */
	path = xasprintf("%s/evidence/service-tickets.jsonl", run_dir);
	txt = util_read_file(path, 4 << 20, &len, &e);
	assert_non_null(txt);
	assert_non_null(strstr(txt, "tickets-admin-token"));
	free(txt);
	free(path);
	/* a second pull finds the files there: refused, nothing overwritten */
	assert_int_equal(lab_evidence_pull(d, lab, &e), -1);
	/* a sensor's folder that still holds a bus.key (a sensor that never
	 * started leaves it): that sensor is not pulled, the error names the
	 * key, the key lands nowhere; the others are pulled (into a fresh
	 * folder here) */
	{
		struct archive_tar kt;
		char *edir = xasprintf("%s/evidence2", run_dir), *saved;
		char *kp = xasprintf("%s/bus.key", edir);
		struct stat ks;
		size_t sink = lab->nbus_srcs;

		for (i = 0; i < lab->nbus_srcs; i++)
			if (strcmp(lab->bus_srcs[i].src, "sink") == 0)
				sink = i;
		assert_true(sink < lab->nbus_srcs);
		archive_tar_init(&kt);
		assert_int_equal(archive_tar_file(&kt, "c/bus.key", 0400, 0, 0,
		    "00ff", 4, &e), 0);
		archive_tar_finish(&kt);
		assert_int_equal(docker_archive_put(d, lab->bus_srcs[sink].id,
		    "/evidence", kt.buf, kt.len, &e), 0);
		archive_tar_free(&kt);
		saved = lab->evidence_dir;
		lab->evidence_dir = edir;
		memset(&e, 0, sizeof e);
		assert_int_equal(lab_evidence_pull(d, lab, &e), -1);
		if (strstr(e.msg, "sensor sink: its folder still holds bus.key") ==
		    NULL)
			fail_msg("pull: \"%s\"", e.msg);
		assert_int_equal(lstat(kp, &ks), -1);
		assert_int_equal(lab->pulled_files, lab->nchains - 1);
		lab->evidence_dir = saved;
		free(kp);
		free(edir);
	}

	/* teardown: nothing of the run is left, volumes included */
	assert_true(objects_of(run_id) > 0);
	if (lab_teardown(d, run_id, &e) < 0)
		fail_msg("teardown: %s", e.msg);
	assert_int_equal(objects_of(run_id), 0);
	/* the anonymous ones too (/evidence, /ctl): gone with their
	 * containers */
	assert_true(nvols >= 7);    /* 5 sensors, /ctl, home, script */
	for (i = 0; i < nvols; i++) {
		struct docker_response r;
		char *vp = xasprintf("/volumes/%s", vols[i]);

		assert_true(vols[i][0] != '\0');
		assert_int_equal(docker_request(d, "GET", vp, NULL, 0, &r, &e), 0);
		if (r.status != 404)
			fail_msg("volume %s left (HTTP %ld)", vols[i], r.status);
		docker_response_free(&r);
		free(vp);
		free(vols[i]);
	}
	nvols = 0;
	lab_free(lab);
	policy_free(p);
	close(bfd);
	free(sock);
	free(home_vol);
	free(script_vol);
	free(run_dir);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
}

/*
 * A volume of the lab's name made beforehand (as another user of the
 * engine could, with the run's label, once the run id shows on the
 * engine) is never adopted: lab up fails naming it, the planted volume's
 * content is not the agent's home, and nothing of the run is left but
 * that volume (removed here).
 */
static void
test_remote_volume_taken(void **state)
{
	struct errbuf e = {0};
	struct docker_response r;
	struct policy *p;
	struct lab *lab;
	char run_id[64], *dir, *run_dir, *body, *vp;
	(void)state;

	dir = mkscratch();
	p = policy_in(dir, "taken", "bait: [tickets-admin-token]\n"
	    "levers: [gateway-deny]\nflaws: []\n");
	util_new_id(run_id);
	run_dir = xasprintf("%s/run", dir);
	assert_int_equal(util_mkdir_p(run_dir, 0700, &e), 0);
	body = xasprintf("{\"Name\":\"ares-%s-home\",\"Labels\":{\"ares.run\":"
	    "\"%s\",\"ares.role\":\"home\",\"planted\":\"yes\"}}", run_id,
	    run_id);
	assert_int_equal(docker_request(d, "POST", "/volumes/create", body,
	    strlen(body), &r, &e), 0);
	assert_int_equal(r.status, 201);
	docker_response_free(&r);
	free(body);
	lab = lab_up(d, p, run_dir, run_id, 7, &e);
	if (lab != NULL)
		fail_msg("lab up adopted a volume made beforehand");
	if (strstr(e.msg, "exists already (not made by this run): refusing "
	    "to adopt it") == NULL)
		fail_msg("lab up: \"%s\"", e.msg);
	/* lab up tore down what it made; the planted volume is not its to
	 * remove by name, but it carries the run's label: the teardown by
	 * label takes it (docs/engine.md) */
	memset(&e, 0, sizeof e);
	(void)lab_teardown(d, run_id, &e);
	vp = xasprintf("/volumes/ares-%s-home", run_id);
	assert_int_equal(docker_request(d, "GET", vp, NULL, 0, &r, &e), 0);
	if (r.status == 200) {
		struct errbuf e2 = {0};
		char *nm = xasprintf("ares-%s-home", run_id);

		(void)docker_volume_remove(d, nm, true, &e2);
		free(nm);
	}
	docker_response_free(&r);
	free(vp);
	assert_int_equal(objects_of(run_id), 0);
	policy_free(p);
	free(run_dir);
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
}

/* What a remote lab cannot have: refused with ERRBUF_INPUT before
 * anything is made on the engine. */
static void
test_remote_refusals(void **state)
{
	static const struct {
		const char *body, *needle;
	} cases[] = {
		{ "bait: [tickets-admin-token, tripwire]\nlevers: [gateway-deny]\nflaws: []\n",
		  "bait tripwire needs inotify" },
		{ "bait: [tickets-admin-token]\nlevers: [gateway-deny]\n"
		  "flaws: [extra-caps, root-user]\n",
		  "no host INPUT firewall can be set there" },
		{ "bait: [tickets-admin-token]\nlevers: [gateway-deny]\n"
		  "flaws: [docker-socket]\n",
		  "flaw docker-socket needs" },
	};
	struct errbuf e = {0};
	char run_id[64], *dir, *run_dir;
	size_t i;
	(void)state;

	dir = mkscratch();
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct policy *p = policy_in(dir, "refused", cases[i].body);
		struct lab *lab;

		util_new_id(run_id);
		run_dir = xasprintf("%s/run%zu", dir, i);
		assert_int_equal(util_mkdir_p(run_dir, 0700, &e), 0);
		memset(&e, 0, sizeof e);
		lab = lab_up(d, p, run_dir, run_id, 7, &e);
		if (lab != NULL)
			fail_msg("case %zu: lab up on a remote engine", i);
		if (e.code != ERRBUF_INPUT || strstr(e.msg, cases[i].needle) ==
		    NULL)
			fail_msg("case %zu: \"%s\" (code %d)", i, e.msg, e.code);
		assert_int_equal(objects_of(run_id), 0);
		policy_free(p);
		free(run_dir);
	}
	assert_int_equal(util_rm_rf(dir, &e), 0);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_refusals),
		cmocka_unit_test(test_remote_lab),
		cmocka_unit_test(test_remote_volume_taken),
	};
	const char *req = getenv("ARES_REQUIRE_DOCKER");
	struct errbuf e = {0};
	char *image = NULL;
	int rc;

	if (sodium_init() < 0)
		return 1;
	d = docker_open(NULL, &e);
	if (d == NULL || docker_negotiate(d, &e) == -1) {
		fprintf(stderr, "test_remote_lab: no Docker Engine: %s\n", e.msg);
		docker_close(d);
		return req != NULL && strcmp(req, "1") == 0 ? 1 : 77;
	}
	if (!docker_is_remote(d)) {
		fprintf(stderr, "test_remote_lab: %s is a local engine (set "
		    "DOCKER_HOST to a remote one: remote_engine.sh)\n",
		    docker_where(d));
		docker_close(d);
		return 77;
	}
	if (lab_image_ensure(d, &image, &e) == -1) {
		fprintf(stderr, "test_remote_lab: lab image: %s\n", e.msg);
		docker_close(d);
		return 1;
	}
	free(image);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	docker_close(d);
	return rc;
}
