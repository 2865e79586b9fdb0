/*
 * seccheck.c - `ares-seccheck`, the probe row "seccomp"'s system calls
 * (docs/probes.md): a static binary in the lab image (/bin/ares-seccheck)
 * and in the probe helper of an agent image, since busybox makes none of
 * them.
 *
 * It tries, in its own process only and undoing what worked:
 *   personality(ADDR_NO_RANDOMIZE)  refused by the engine's default
 *                                   profile, lifted by flaw
 *                                   seccomp-unconfined's profile
 *   get_mempolicy()                 the same (NUMA policy of its own pages)
 *   unshare(CLONE_NEWUSER)          refused by both (a new user namespace)
 *   keyctl(GET_KEYRING_ID, user)    refused by both (the kernel keyrings)
 *   io_uring_setup()                refused by ours (the engine's may allow)
 *   bpf(), perf_event_open(), userfaultfd()  refused by both
 * and prints one line "@NAME ok" or "@NAME ERRNONAME" each, then "@done".
 * Exit 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

/* errno's name for the few a refusal gives, else its number. */
static const char *
seccheck_errname(int err, char *buf, size_t len)
{
	switch (err) {
	case EPERM:
		return "EPERM";
	case ENOSYS:
		return "ENOSYS";
	case EACCES:
		return "EACCES";
	case EINVAL:
		return "EINVAL";
	case EFAULT:
		return "EFAULT";
	case EBADF:
		return "EBADF";
	case ENOKEY:
		return "ENOKEY";
	default:
		snprintf(buf, len, "errno%d", err);
		return buf;
	}
}

/* One line for a call that returned rc (errno when -1). */
static void
seccheck_say(const char *name, long rc, int err)
{
	char buf[32];

	if (rc != -1)
		printf("@%s ok\n", name);
	else
		printf("@%s %s\n", name, seccheck_errname(err, buf, sizeof buf));
}

int
main(void)
{
	long rc, old;
	int err;

	old = syscall(SYS_personality, 0xffffffffUL);
	rc = syscall(SYS_personality, (unsigned long)ADDR_NO_RANDOMIZE |
	    (old != -1 ? (unsigned long)old : 0));
	err = errno;
	seccheck_say("personality", rc, err);
	if (rc != -1 && old != -1)
		(void)syscall(SYS_personality, (unsigned long)old);
	{
		int mode = 0;

		errno = 0;
		rc = syscall(SYS_get_mempolicy, &mode, NULL, 0UL, NULL, 0UL);
		seccheck_say("get_mempolicy", rc, errno);
	}
	errno = 0;
	rc = syscall(SYS_unshare, CLONE_NEWUSER);
	seccheck_say("unshare", rc, errno);
	errno = 0;
	rc = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */,
	    -4 /* KEY_SPEC_USER_KEYRING */, 0);
	seccheck_say("keyctl", rc, errno);
	errno = 0;
	rc = syscall(SYS_io_uring_setup, 1, NULL);   /* EFAULT when let by */
	seccheck_say("io_uring_setup", rc == -1 && errno == EFAULT ? 0 : rc,
	    errno);
	errno = 0;
	rc = syscall(SYS_bpf, 0, NULL, 0);           /* EFAULT/EINVAL: let by */
	seccheck_say("bpf", rc == -1 && (errno == EFAULT || errno == EINVAL) ?
	    0 : rc, errno);
	errno = 0;
	rc = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	seccheck_say("perf_event_open", rc == -1 && (errno == EFAULT ||
	    errno == EINVAL) ? 0 : rc, errno);
	errno = 0;
	rc = syscall(SYS_userfaultfd, 0);
	if (rc >= 0)
		close((int)rc);
	seccheck_say("userfaultfd", rc, errno);
	printf("@done\n");
	return 0;
}
