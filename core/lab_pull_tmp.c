/*
 * lab_pull_tmp.c - a placeholder for lab_evidence_pull until the remote
 * lab side provides it: a local lab needs nothing; a remote lab's pull is
 * not built here (an error, so the drill records it and fails closed).
 */
#include "internal.h"

int
lab_evidence_pull(struct docker *d, struct lab *lab, struct errbuf *e)
{
	(void)d;
	if (!lab->remote)
		return 0;
	return errbuf_set(e, ERRBUF_INTERNAL, "evidence pull from a remote "
	    "lab: not built");
}
