/* SPDX-License-Identifier: ISC */
/*
 * The crash loop: clients submit without pause while the broker is killed
 * with SIGKILL at random moments and restarted.  At the end every job
 * whose submit was answered exists exactly once, tickets only grew, every
 * status obeys cmdgate-protocol(7), Durability, and the store opens clean.
 *
 * CRASHLOOP_KILLS sets the number of kills (default 8, under a minute;
 * "make stress" runs 200).  The figures are printed.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "testnet.h"

#define NCLIENTS	4
#define MAX_ACKS	100000

static struct broker	b;
static char		portfile[256], tools[256];

static void
setup(void)
{
	broker_prepare(&b);
	snprintf(portfile, sizeof(portfile), "%s", broker_path(&b, "port"));
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	write_file(tools, "{\"tools\":[{\"name\":\"echo\",\"tier\":\"smooth\","
	    "\"exec\":[\"echo\",\"{text}\"],\"params\":{\"type\":\"object\","
	    "\"properties\":{\"text\":{\"type\":\"string\"}}}}]}", 0600);
}

static void
teardown(void)
{
	broker_stop(&b);
}

static void
publish_port(void)
{
	char	tmp[300], buf[16];

	snprintf(tmp, sizeof(tmp), "%s.new", portfile);
	snprintf(buf, sizeof(buf), "%d\n", b.port);
	write_file(tmp, buf, 0600);
	rename(tmp, portfile);
}

/* A client process: submit, record each answered ticket, reconnect. */
static void
client_loop(int id, const char *ackpath)
{
	FILE			*acks = fopen(ackpath, "w");
	char			 req[256], buf[4096], *t;
	int			 fd = -1, seq = 0, port;
	ssize_t			 n;
	FILE			*pf;

	setvbuf(acks, NULL, _IOLBF, 0);
	for (;;) {
		if (fd == -1) {
			if ((pf = fopen(portfile, "r")) == NULL ||
			    fscanf(pf, "%d", &port) != 1)
				port = 0;
			if (pf != NULL)
				fclose(pf);
			if ((fd = broker_dial(port)) == -1) {
				struct timespec ts = { 0, 5 * 1000000 };

				nanosleep(&ts, NULL);	/* the broker restarts */
				continue;
			}
		}
		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"batch_execute\",\"params\":{\"async\":true,"
		    "\"label\":\"c%d-%d\",\"commands\":[{\"tool\":\"echo\","
		    "\"params\":{\"text\":\"x\"}}]}}\n", seq, id, seq);
		if (send(fd, req, strlen(req), MSG_NOSIGNAL) <= 0 ||
		    (n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0) {
			close(fd);
			fd = -1;
			seq++;	/* unanswered: it may or may not exist */
			continue;
		}
		buf[n] = '\0';
		if ((t = strstr(buf, "\"ticket\":\"")) != NULL)
			fprintf(acks, "c%d-%d %.*s\n", id, seq,
			    (int)strcspn(t + 10, "\""), t + 10);
		seq++;
	}
}

static void
kill9_and_restart(const char **args)
{
	broker_kill(&b, SIGKILL);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	publish_port();
}

/* Every job in the store, by label: ticket and status. */
static json_object *
all_jobs(struct client *c)
{
	json_object	*all = json_object_new_object(), *r, *list, *j, *e;
	char		 line[256], after[32] = "";
	size_t		 i;

	for (;;) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"list_jobs\",\"params\":{\"limit\":1000%s%s%s}}",
		    after[0] ? ",\"after\":\"" : "", after, after[0] ? "\"" : "");
		r = client_call(c, line);
		list = jpath(r, "result.jobs");
		ck_assert_ptr_nonnull(list);
		for (i = 0; i < json_object_array_length(list); i++) {
			j = json_object_array_get_idx(list, i);
			if (json_object_object_get_ex(all, json_object_get_string(
			    jpath(j, "label")), &e))
				json_object_array_add(e, json_object_get(j));
			else {
				e = json_object_new_array();
				json_object_array_add(e, json_object_get(j));
				json_object_object_add(all,
				    json_object_get_string(jpath(j, "label")),
				    e);
			}
		}
		if (jpath(r, "result.next") == NULL) {
			json_object_put(r);
			return all;
		}
		snprintf(after, sizeof(after), "%s", json_object_get_string(
		    jpath(r, "result.next")));
		json_object_put(r);
	}
}

START_TEST(crash_loop)
{
	const char	*args[] = { "--tools", tools, "--kill-grace", "1", NULL };
	const char	*env = getenv("CRASHLOOP_KILLS");
	pid_t		 clients[NCLIENTS];
	char		 ackpath[NCLIENTS][256], label[64], ticket[32];
	char		 line[256];
	char		 last[NCLIENTS][32];
	struct timespec	 ts;
	struct client	*c;
	json_object	*all, *e, *r;
	int		 kills = env ? atoi(env) : 8, k, i, status, acked = 0;
	int		 lost = 0, dup = 0, njobs = 0;
	FILE		*f;
	DIR		*d;
	struct dirent	*de;

	srand((unsigned)getpid());
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	publish_port();
	for (i = 0; i < NCLIENTS; i++) {
		snprintf(ackpath[i], sizeof(ackpath[i]), "%s/acks.%d", b.dir, i);
		if ((clients[i] = fork()) == 0)
			client_loop(i, ackpath[i]);
	}
	for (k = 0; k < kills; k++) {
		ts.tv_sec = 0;
		ts.tv_nsec = (20 + rand() % 180) * 1000000L;
		nanosleep(&ts, NULL);	/* a random moment: the point */
		kill9_and_restart(args);
	}
	for (i = 0; i < NCLIENTS; i++) {
		kill(clients[i], SIGKILL);
		waitpid(clients[i], &status, 0);
	}
	kill9_and_restart(args);
	c = client_tcp(b.port);
	/* Let what was queued run out; bounded. */
	for (k = 0; k < 600; k++) {
		r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
		    "\"queue_status\"}");
		status = json_object_get_int(jpath(r, "result.queued")) +
		    json_object_get_int(jpath(r, "result.running"));
		json_object_put(r);
		if (status == 0)
			break;
		ts.tv_sec = 0;
		ts.tv_nsec = 50 * 1000000L;
		nanosleep(&ts, NULL);
	}
	ck_assert_int_eq(status, 0);
	all = all_jobs(c);
	json_object_object_foreach(all, lab, list) {
		njobs += (int)json_object_array_length(list);
		if (json_object_array_length(list) > 1)
			dup++;
		for (i = 0; i < (int)json_object_array_length(list); i++) {
			json_object *j = json_object_array_get_idx(list, i);
			const char *st = json_object_get_string(
			    jpath(j, "status"));

			(void)lab;
			if (strcmp(st, "done") == 0)
				continue;
			/* Only a restart fails an echo. */
			ck_assert_str_eq(st, "failed");
			snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\","
			    "\"id\":3,\"method\":\"poll_job\",\"params\":"
			    "{\"ticket\":\"%s\"}}", json_object_get_string(
			    jpath(j, "ticket")));
			r = client_call(c, line);
			ck_assert_int_eq(strncmp(json_object_get_string(jpath(r,
			    "result.error")), "interrupted by broker restart",
			    29), 0);
			json_object_put(r);
		}
	}
	for (i = 0; i < NCLIENTS; i++) {
		last[i][0] = '\0';
		ck_assert_ptr_nonnull(f = fopen(ackpath[i], "r"));
		while (fscanf(f, "%63s %31s", label, ticket) == 2) {
			acked++;
			/* Tickets only grow. */
			ck_assert_msg(strlen(ticket) > strlen(last[i]) ||
			    (strlen(ticket) == strlen(last[i]) &&
			    strcmp(ticket, last[i]) > 0), "%s after %s",
			    ticket, last[i]);
			snprintf(last[i], sizeof(last[i]), "%s", ticket);
			if (!json_object_object_get_ex(all, label, &e) ||
			    json_object_array_length(e) != 1) {
				lost += e == NULL;
				continue;
			}
			ck_assert_str_eq(json_object_get_string(jpath(
			    json_object_array_get_idx(e, 0), "ticket")),
			    ticket);
		}
		fclose(f);
	}
	/* The store opened clean every time: nothing was moved aside. */
	ck_assert_ptr_nonnull(d = opendir(broker_path(&b, "state")));
	while ((de = readdir(d)) != NULL)
		ck_assert_ptr_null(strstr(de->d_name, "corrupt"));
	closedir(d);
	printf("crash loop: kills %d, jobs stored %d, acknowledged %d, "
	    "lost %d, duplicated %d\n", kills + 1, njobs, acked, lost, dup);
	fflush(stdout);
	ck_assert_int_gt(acked, 0);
	ck_assert_int_eq(lost, 0);
	ck_assert_int_eq(dup, 0);
	json_object_put(all);
	client_close(c);
}
END_TEST

static Suite *
crash_suite(void)
{
	Suite	*s = suite_create("crash");
	TCase	*tc = tcase_create("crash");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 3600);
	tcase_add_test(tc, crash_loop);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(crash_suite());
}
