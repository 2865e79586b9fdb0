/*
 * seccomp.c - the seccomp profile of flaw seccomp-unconfined
 * (docs/flaws.md, docs/security.md "Why the lab never runs unconfined").
 *
 * A Compose file's `security_opt: [seccomp=unconfined]` hands a container
 * every system call of the host kernel.  The lab never does: that is the
 * whole kernel's attack surface for a compromised agent, with no filter
 * between.  The flaw is reproduced as a real profile, passed as
 * HostConfig.SecurityOpt "seccomp=<json>" (what the Engine API takes), an
 * allowlist (default: EPERM; a system call added to the kernel later is
 * refused, not let by) that lifts refusals of the engine's default profile
 * which reach nothing beyond the agent's own process:
 *
 *   personality(ADDR_NO_RANDOMIZE)   address randomisation off for its own
 *                                    processes (gdb's default); with
 *                                    no-new-privileges no set-uid program
 *                                    inherits it
 *   get_mempolicy, set_mempolicy,    the NUMA policy of its own memory
 *   mbind                            (the engine asks CAP_SYS_NICE; moving
 *                                    other processes' pages, which is what
 *                                    that guards, stays refused:
 *                                    move_pages, migrate_pages)
 *
 * and keeps refusing the families that widen what the host kernel exposes
 * or reach beyond the container: new namespaces (unshare, setns, clone
 * with a CLONE_NEW* flag, clone3 answered ENOSYS so that libc falls back
 * to clone), mounts (mount, umount2, pivot_root, the new mount API,
 * chroot), bpf, perf_event_open, userfaultfd, io_uring_* (refused here
 * even where the engine's default allows them), kexec, modules, ptrace,
 * process_vm_*, kcmp, pidfd_getfd, open_by_handle_at, name_to_handle_at,
 * the kernel keyrings (add_key, keyctl, request_key: not namespaced by
 * uid, a root agent would share the host root's), clock and time
 * setting, syslog, swap, reboot, quotactl, modify_ldt, iopl/ioperm, and
 * every obsolete or unknown call.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allowed without condition (x86_64 names; the kernel's own checks, the
 * capabilities and no-new-privileges still apply). */
static const char *const seccomp_allowed[] = {
	"accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl",
	"bind", "brk", "capget", "capset", "chdir", "chmod", "chown",
	"clock_getres", "clock_gettime", "clock_nanosleep", "close",
	"close_range", "connect", "copy_file_range", "creat", "dup", "dup2",
	"dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait",
	"epoll_pwait2", "epoll_wait", "eventfd", "eventfd2", "execve",
	"execveat", "exit", "exit_group", "faccessat", "faccessat2",
	"fadvise64", "fallocate", "fanotify_mark", "fchdir", "fchmod",
	"fchmodat", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr",
	"flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
	"fstatfs", "fsync", "ftruncate", "futex", "futex_waitv", "futimesat",
	"get_robust_list", "get_thread_area", "getcpu", "getcwd", "getdents",
	"getdents64", "getegid", "geteuid", "getgid", "getgroups",
	"getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
	"getpriority", "getrandom", "getresgid", "getresuid", "getrlimit",
	"getrusage", "getsid", "getsockname", "getsockopt", "gettid",
	"gettimeofday", "getuid", "getxattr", "inotify_add_watch",
	"inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel",
	"io_destroy", "io_getevents", "io_pgetevents", "io_setup",
	"io_submit", "ioctl", "ioprio_get", "ioprio_set", "kill",
	"landlock_add_rule", "landlock_create_ruleset",
	"landlock_restrict_self", "lchown", "lgetxattr", "link", "linkat",
	"listen", "listxattr", "llistxattr", "lremovexattr", "lseek",
	"lsetxattr", "lstat", "madvise", "membarrier", "memfd_create",
	"mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2",
	"mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify",
	"mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap",
	"msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock",
	"munlockall", "munmap", "nanosleep", "newfstatat", "open", "openat",
	"openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe",
	"pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll",
	"prctl", "pread64", "preadv", "preadv2", "prlimit64", "pselect6",
	"pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink",
	"readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg",
	"remap_file_pages", "removexattr", "rename", "renameat", "renameat2",
	"restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
	"rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_getscheduler", "sched_rr_get_interval",
	"sched_setaffinity", "sched_setattr", "sched_setparam",
	"sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
	"semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg",
	"sendto", "set_robust_list", "set_thread_area", "set_tid_address",
	"setfsgid", "setfsuid", "setgid", "setgroups", "setitimer", "setpgid",
	"setpriority", "setregid", "setresgid", "setresuid", "setreuid",
	"setrlimit", "setsid", "setsockopt", "setuid", "setxattr", "shmat",
	"shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd",
	"signalfd4", "socket", "socketpair", "splice", "stat", "statfs",
	"statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs",
	"sysinfo", "tee", "tgkill", "timer_create", "timer_delete",
	"timer_getoverrun", "timer_gettime", "timer_settime",
	"timerfd_create", "timerfd_gettime", "timerfd_settime", "time", "times",
	"tkill", "truncate", "umask", "uname", "unlink", "unlinkat", "utime",
	"utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid",
	"write", "writev",
	NULL,
};

/* Lifted from the engine's default profile (see above). */
static const char *const seccomp_lifted[] = {
	"get_mempolicy", "set_mempolicy", "mbind", NULL,
};

/* personality(2) values allowed: the engine's default ones (query,
 * PER_LINUX, PER_LINUX32, UNAME26 with either) and, lifted,
 * ADDR_NO_RANDOMIZE with PER_LINUX or PER_LINUX32. */
static const unsigned long seccomp_personality[] = {
	0x0, 0x8, 0x20000, 0x20008, 0xffffffffUL, 0x0040000, 0x0040008,
};

/* The CLONE_NEW* flags clone(2) may not carry (NEWNS, NEWCGROUP,
 * NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET). */
#define SECCOMP_CLONE_NS 0x7E020000UL

/* {"names":[...],"action":action} appended to arr; returns it. */
static cJSON *
seccomp_rule(cJSON *arr, const char *const *names, const char *action)
{
	cJSON *r = cJSON_CreateObject(), *n = cJSON_AddArrayToObject(r,
	    "names");
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		cJSON_AddItemToArray(n, cJSON_CreateString(names[i]));
	cJSON_AddStringToObject(r, "action", action);
	cJSON_AddItemToArray(arr, r);
	return r;
}

/* One argument condition {"index","value","valueTwo","op"} on rule r. */
static void
seccomp_arg(cJSON *r, unsigned idx, unsigned long value,
    unsigned long two, const char *op)
{
	cJSON *args = cJSON_GetObjectItemCaseSensitive(r, "args"), *a;

	if (args == NULL)
		args = cJSON_AddArrayToObject(r, "args");
	a = cJSON_CreateObject();
	cJSON_AddNumberToObject(a, "index", idx);
	cJSON_AddNumberToObject(a, "value", (double)value);
	cJSON_AddNumberToObject(a, "valueTwo", (double)two);
	cJSON_AddStringToObject(a, "op", op);
	cJSON_AddItemToArray(args, a);
}

const char *
seccomp_lab_profile(void)
{
	static char *json;
	static const char *const clone[] = { "clone", NULL };
	static const char *const clone3[] = { "clone3", NULL };
	static const char *const pers[] = { "personality", NULL };
	cJSON *p, *arr, *r;
	size_t i;

	if (json != NULL)
		return json;
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "defaultAction", "SCMP_ACT_ERRNO");
	cJSON_AddNumberToObject(p, "defaultErrnoRet", 1);        /* EPERM */
	arr = cJSON_AddArrayToObject(p, "archMap");
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "architecture", "SCMP_ARCH_X86_64");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "subArchitectures"),
	    cJSON_CreateString("SCMP_ARCH_X86"));
	cJSON_AddItemToArray(arr, r);
	arr = cJSON_AddArrayToObject(p, "syscalls");
	seccomp_rule(arr, seccomp_allowed, "SCMP_ACT_ALLOW");
	seccomp_rule(arr, seccomp_lifted, "SCMP_ACT_ALLOW");
	r = seccomp_rule(arr, clone, "SCMP_ACT_ALLOW");
	seccomp_arg(r, 0, SECCOMP_CLONE_NS, 0, "SCMP_CMP_MASKED_EQ");
	r = seccomp_rule(arr, clone3, "SCMP_ACT_ERRNO");
	cJSON_AddNumberToObject(r, "errnoRet", 38);              /* ENOSYS */
	for (i = 0; i < sizeof seccomp_personality /
	    sizeof seccomp_personality[0]; i++) {
		r = seccomp_rule(arr, pers, "SCMP_ACT_ALLOW");
		seccomp_arg(r, 0, seccomp_personality[i], 0, "SCMP_CMP_EQ");
	}
	json = cJSON_PrintUnformatted(p);
	cJSON_Delete(p);
	if (json == NULL)
		util_fatal("seccomp: cannot serialise the profile");
	return json;
}

bool
seccomp_lab_lifted(const char *name)
{
	size_t i;

	for (i = 0; seccomp_lifted[i] != NULL; i++)
		if (strcmp(seccomp_lifted[i], name) == 0)
			return true;
	return strcmp(name, "personality") == 0;
}

bool
seccomp_lab_allows(const char *name)
{
	size_t i;

	for (i = 0; seccomp_allowed[i] != NULL; i++)
		if (strcmp(seccomp_allowed[i], name) == 0)
			return true;
	return seccomp_lab_lifted(name) || strcmp(name, "clone") == 0;
}
