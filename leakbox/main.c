/*
 * main.c - `ares-lab`, the multi-call binary that runs inside the lab
 * containers: `ares-lab gateway|service|model|agent|dns|sink|dockerproxy`
 * or hostsim (or invoked through a symlink of that name), and the tools of
 * a scripted agent: `ares-lab tool|http|read_file|shell|note|done` (toolcli.c).
 * Components and environment: docs/lab.md; scripts: docs/agents.md.
 */
#include "leakbox.h"

#include <stdio.h>
#include <string.h>

/* The usage text to f; EXIT_USAGE when f is stderr (a usage error),
 * else 0. */
static int
usage(FILE *f)
{
	fprintf(f, "usage: ares-lab gateway|service|model|agent|dns|sink|dockerproxy|gwctl|seal|TOOL\n"
	    "  gateway  the agent's only route to a model (GATEWAY_*, MODEL_URL,\n"
	    "           AGENT_KEY, REAL_KEY, CHANGES_AUTO_APPROVE, BUS)\n"
	    "  service  fake internal API with a decoy token (SERVICE_*, DECOY_TOKEN,\n"
	    "           BAIT_NAME, ADMIN_OPEN, DECOY_ENDPOINT, INSTRUCTION_BAIT_NAME)\n"
	    "  model    offline scripted model (MODEL_LISTEN, MODEL_KEY, MODEL_SEED,\n"
	    "           MODEL_NAME)\n"
	    "  agent    Poyo, the tool-using loop (OPENAI_BASE_URL, OPENAI_API_KEY,\n"
	    "           AGENT_MODEL, AGENT_MAX_STEPS, AGENT_TASK, AGENT_IDLE)\n"
	    "  dns      the lab resolver (DNS_MODE, SINK_IP, DNS_LISTEN)\n"
	    "  sink     the simulated internet (SINK_TCP_PORTS, SINK_UDP_PORTS)\n"
	    "  dockerproxy  allowlisting Engine API proxy (PROXY_SOCK, ENGINE_SOCK)\n"
	    "  gwctl METHOD /TARGET [BODY]  one request on the gateway's control\n"
	    "           socket from inside its container (GATEWAY_CONTROL)\n"
	    "  seal BRIDGE...  a lab bridge's sysctls, written and read back from\n"
	    "           the host's network namespace (a remote engine's seal)\n"
	    "  decoys   fake STS/metadata, git, MCP and SSH services (CLOUD_*, GIT_*,\n"
	    "           MCP_*, SSH_*; docs/bait.md)\n"
	    "  hostsim  the decoy host of flaws host-pid, host-ipc (HOSTSIM_TOKEN,\n"
	    "           HOSTSIM_SHM_TOKEN)\n"
	    "Sensors also take BUS, EVIDENCE and RUN_ID.  See docs/lab.md.\n"
	    "Tools for a scripted agent (ares-lab tool --help, docs/agents.md):\n"
	    "  tool NAME ARGS_JSON | http [--unix SOCK] [-X M] [-H 'K: V'] [-d BODY] URL\n"
	    "  read_file PATH | shell COMMAND | note TEXT... | done [TEXT...]\n");
	return f == stderr ? EXIT_USAGE : 0;
}

/* The component is the first argument, or the name the binary was run
 * by (a link named after a tool); its exit code, else the usage
 * (EXIT_USAGE, or 0 for -h, --help, help). */
int
main(int argc, char **argv)
{
	const char *cmd = NULL;
	const char *self = argc > 0 ? strrchr(argv[0], '/') : NULL;
	self = self ? self + 1 : (argc > 0 ? argv[0] : "");
	if (strcmp(self, "ares-lab") != 0 && strcmp(self, "lt-ares-lab") != 0)
		cmd = self;
	else if (argc > 1)
		cmd = argv[1];
	if (!cmd)
		return usage(stderr);
	if (strcmp(cmd, "gateway") == 0)
		return gateway_main();
	if (strcmp(cmd, "service") == 0)
		return service_main();
	if (strcmp(cmd, "model") == 0)
		return model_main();
	if (strcmp(cmd, "agent") == 0)
		return agent_main();
	if (strcmp(cmd, "dns") == 0)
		return dns_main();
	if (strcmp(cmd, "sink") == 0)
		return sink_main();
	if (strcmp(cmd, "dockerproxy") == 0)
		return dockerproxy_main();
	if (strcmp(cmd, "decoys") == 0)
		return decoys_main();
	if (strcmp(cmd, "gwctl") == 0 && cmd != self)
		return ctlcli_main(argc - 1, argv + 1);
	if (strcmp(cmd, "seal") == 0 && cmd != self)
		return seal_main(argc - 1, argv + 1);
	if (strcmp(cmd, "hostsim") == 0 || strcmp(cmd, "init") == 0)
		return hostsim_main(argc, argv);
	if (hostsim_is_decoy(cmd))
		return hostsim_decoy_main();
	static const char *const tools[] = { "tool", "http", "read_file",
	    "shell", "note", "done" };
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (strcmp(cmd, tools[i]) != 0)
			continue;
		if (cmd == self) {          /* through a symlink named so */
			argv[0] = (char *)tools[i];
			return toolcli_main(argc, argv);
		}
		return toolcli_main(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "help") == 0)
		return usage(stdout);
	fprintf(stderr, "ares-lab: unknown component '%s'\n", cmd);
	return usage(stderr);
}
