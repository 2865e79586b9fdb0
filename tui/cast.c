/*
 * cast.c - ares replay RUN_DIR --export-cast FILE: the replay screen
 * rendered through ncurses into an asciicast v2 file, one frame per beat.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <curses.h>

#include "core.h"
#include "sprites.h"
#include "tui.h"

/* Append the bytes written to fd since *off as one [t, "o", data] line. */
static int
console_cast_frame(FILE *out, int fd, off_t *off, double t)
{
	char buf[65536];
	cJSON *a;
	char *line, *data = NULL;
	size_t len = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof buf, *off)) > 0) {
		data = xrealloc(data, len + (size_t)n + 1);
		memcpy(data + len, buf, (size_t)n);
		len += (size_t)n;
		*off += n;
	}
	if (len == 0) {
		free(data);
		return 0;
	}
	data[len] = '\0';
	a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateNumber(t));
	cJSON_AddItemToArray(a, cJSON_CreateString("o"));
	cJSON_AddItemToArray(a, cJSON_CreateString(data));
	line = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	free(data);
	if (line == NULL)
		return -1;
	fprintf(out, "%s\n", line);
	free(line);
	return 0;
}

/* ares replay RUN_DIR --export-cast FILE (tui.h): 0, or EXIT_USAGE when
 * the run cannot be read, EXIT_INTERNAL when the file cannot be written
 * (message on stderr). */
int
console_export_cast(const struct console_options *o, const char *run_dir,
    const char *pub_path, const char *cast_path)
{
	static struct console_ui ui;
	struct errbuf e = { 0 };
	struct replay *rp = replay_load(run_dir, pub_path, &e);
	const struct replay *shown;
	char tmpl[] = "/tmp/ares-cast.XXXXXX";
	FILE *scrout, *scrin, *out;
	SCREEN *scr;
	cJSON *hdr, *env;
	char *h, title[256];
	double t = 0;
	off_t off = 0;
	int fd, rc = EXIT_INTERNAL;

	if (rp == NULL) {
		fprintf(stderr, "ares replay: %s\n", e.msg);
		return EXIT_USAGE;
	}
	memset(&ui, 0, sizeof ui);
	ui.o = o;
	ui.ascii = o->ascii;
	ui.def_bg = -1;
	/* Render as a UTF-8 xterm-256color of 80x24. */
	if (setlocale(LC_ALL, "C.UTF-8") == NULL)
		setlocale(LC_ALL, "");
	ui.utf8 = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	ui.sheet = sprite_sheet_load(sprite_default_path(), &e);
	setenv("LINES", "24", 1);
	setenv("COLUMNS", "80", 1);
	/* UTF-8 box drawing rather than the VT100 line-drawing charset */
	if (ui.utf8)
		setenv("NCURSES_NO_UTF8_ACS", "1", 1);
	fd = mkstemp(tmpl);
	if (fd == -1) {
		fprintf(stderr, "ares replay: %s: %s\n", tmpl, strerror(errno));
		replay_free(rp);
		return EXIT_INTERNAL;
	}
	unlink(tmpl);
	scrout = fdopen(fd, "w");
	scrin = fopen("/dev/null", "r");
	out = fopen(cast_path, "w");
	if (scrout == NULL || scrin == NULL || out == NULL) {
		fprintf(stderr, "ares replay: --export-cast %s: %s\n",
		    cast_path, strerror(errno));
		goto out;
	}
	scr = newterm("xterm-256color", scrout, scrin);
	if (scr == NULL) {
		fprintf(stderr, "ares replay: no terminfo for xterm-256color\n");
		goto out;
	}
	ui.color = has_colors() && !o->no_color && getenv("NO_COLOR") == NULL;
	console_init_colors(&ui);
	ui.halfblock = ui.utf8 && ui.color && ui.sheet != NULL;
	resizeterm(24, 80);

	hdr = cJSON_CreateObject();
	cJSON_AddNumberToObject(hdr, "version", 2);
	cJSON_AddNumberToObject(hdr, "width", 80);
	cJSON_AddNumberToObject(hdr, "height", 24);
	cJSON_AddNumberToObject(hdr, "timestamp", (double)(util_wall_ns() /
	    1000000000ull));
	snprintf(title, sizeof title, "ares replay %s", rp->run_id);
	cJSON_AddStringToObject(hdr, "title", title);
	env = cJSON_AddObjectToObject(hdr, "env");
	cJSON_AddStringToObject(env, "TERM", "xterm-256color");
	cJSON_AddStringToObject(env, "SHELL", "/bin/sh");
	h = cJSON_PrintUnformatted(hdr);
	cJSON_Delete(hdr);
	fprintf(out, "%s\n", h);
	free(h);

	shown = rp;
	console_replay_enter(&ui, rp);
	rp = NULL;   /* the replay screen owns it */
	for (size_t i = 0; i < (shown->nbeats ? shown->nbeats : 1); i++) {
		console_replay_goto(i);
		console_draw(&ui);
		fflush(scrout);
		if (console_cast_frame(out, fd, &off, t) == -1)
			goto out_scr;
		t += (double)console_replay_gap(shown, i, 1.0) / 1e9;
	}
	/* Hold the verdict.  endwin()'s output (leaving the alternate
	 * screen) is not recorded: the recording ends on the verdict, with
	 * the cursor shown again. */
	t += 2.0;
	endwin();
	fflush(scrout);
	off = lseek(fd, 0, SEEK_END);
	fprintf(out, "[%.6f,\"o\",\"\\u001b[?25h\"]\n", t);
	rc = fflush(out) == 0 && !ferror(out) ? 0 : EXIT_INTERNAL;
	if (rc != 0)
		fprintf(stderr, "ares replay: --export-cast %s: write failed\n",
		    cast_path);
out_scr:
	delscreen(scr);
out:
	if (out != NULL && fclose(out) != 0 && rc == 0)
		rc = EXIT_INTERNAL;
	if (scrin != NULL)
		fclose(scrin);
	if (scrout != NULL)
		fclose(scrout);
	else
		close(fd);
	replay_free(rp);
	console_replay_close();
	sprite_sheet_free(ui.sheet);
	return rc;
}
