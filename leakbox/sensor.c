/*
 * sensor.c - the sender side of the sensor bus (core/bus.c receives).
 *
 * One compact JSON object per AF_UNIX datagram to $BUS, never blocking and
 * never failing loudly: a sensor must not wedge the component it watches.
 * Protocol: docs/sensors.md.
 */
#include "leakbox.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char sensor_src[128] = "unknown";
static int sensor_fd = -1;
static struct sockaddr_un sensor_addr;
static bool sensor_ready;
static pthread_once_t sensor_once = PTHREAD_ONCE_INIT;

static void sensor_open(void)
{
	const char *bus = getenv("BUS");
	if (!bus || !*bus || strlen(bus) >= sizeof(sensor_addr.sun_path))
		return;
	sensor_addr.sun_family = AF_UNIX;
	strcpy(sensor_addr.sun_path, bus);
	sensor_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	sensor_ready = sensor_fd >= 0;
}

void sensor_init(const char *src)
{
	snprintf(sensor_src, sizeof(sensor_src), "%s", src);
	pthread_once(&sensor_once, sensor_open);
}

char *sensor_trunc(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return xstrdup(s);
	size_t keep = max >= 3 ? max - 3 : 0;
	/* back off to a UTF-8 boundary (never end inside a sequence) */
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
		keep--;
	char *out = xmalloc(keep + 4);
	memcpy(out, s, keep);
	memcpy(out + keep, "...", 4);
	return out;
}

/* The longest string value among obj's members (recursing into arrays and
 * objects), or NULL. */
static cJSON *longest_string(cJSON *obj, size_t *len)
{
	cJSON *best = NULL;
	*len = 0;
	cJSON *it;
	cJSON_ArrayForEach(it, obj) {
		if (cJSON_IsString(it) && it->valuestring) {
			size_t l = strlen(it->valuestring);
			if (l > *len) {
				*len = l;
				best = it;
			}
		} else if (cJSON_IsArray(it) || cJSON_IsObject(it)) {
			size_t l;
			cJSON *b = longest_string(it, &l);
			if (b && l > *len) {
				*len = l;
				best = b;
			}
		}
	}
	return best;
}

char *sensor_serialize(cJSON *obj, size_t max)
{
	for (int round = 0; round < 64; round++) {
		char *s = cJSON_PrintUnformatted(obj);
		if (!s)
			return NULL;
		size_t n = strlen(s);
		if (n < max)
			return s;
		free(s);
		size_t l;
		cJSON *victim = longest_string(obj, &l);
		if (!victim || l <= 16)
			return NULL;
		/* escaping can inflate a string up to 6x; cut by the overflow plus
		 * a margin, at least halving */
		size_t over = n - max + 64;
		size_t target = l > over * 6 ? l - over : l / 2;
		if (target > l / 2 && over * 6 >= l)
			target = l / 2;
		char *t = sensor_trunc(victim->valuestring, target);
		cJSON_SetValuestring(victim, t);
		free(t);
	}
	return NULL;
}

int sensor_emit(const char *kind, cJSON *fields)
{
	pthread_once(&sensor_once, sensor_open);
	if (!fields)
		fields = cJSON_CreateObject();
	if (!sensor_ready) {
		cJSON_Delete(fields);
		return -1;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "src", sensor_src);
	cJSON_AddStringToObject(o, "kind", kind);
	/* raw integer: a double would lose nanoseconds past 2^53 */
	char ts[32];
	snprintf(ts, sizeof(ts), "%llu", (unsigned long long)util_mono_ns());
	cJSON_AddRawToObject(o, "t_mono_ns", ts);
	cJSON *it = fields->child;
	while (it) {
		cJSON *next = it->next;
		cJSON_DetachItemViaPointer(fields, it);
		if (cJSON_GetObjectItemCaseSensitive(o, it->string))
			cJSON_Delete(it);   /* the common fields win */
		else
			cJSON_AddItemToObject(o, it->string, it);
		it = next;
	}
	cJSON_Delete(fields);
	char *s = sensor_serialize(o, BUS_DGRAM_MAX);
	cJSON_Delete(o);
	if (!s)
		return -1;
	ssize_t n = sendto(sensor_fd, s, strlen(s), MSG_DONTWAIT | MSG_NOSIGNAL,
	    (struct sockaddr *)&sensor_addr, sizeof(sensor_addr));
	free(s);
	return n < 0 ? -1 : 0;
}
