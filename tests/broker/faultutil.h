/* SPDX-License-Identifier: ISC */
/* The broker under the fault shim: what check_faults and check_prestart share. */
#ifndef CMDGATE_TESTS_FAULTUTIL_H
#define CMDGATE_TESTS_FAULTUTIL_H

#include <sys/types.h>

#include <json-c/json.h>

#include "testnet.h"

#define SUBMIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
		"\"params\":{\"async\":true,\"commands\":[{\"tool\":\"echo\"," \
		"\"params\":{\"text\":\"x\"}}]}}"

extern struct broker	 b;	/* the broker of the test */
extern struct client	*c;	/* a client of it */

/* The broker under the shim, with args (NULL-ended, or NULL); c to it. */
void		 start_shimmed(const char **args);
/* The same without c: 0 once ready, or the exit status it had instead. */
int		 start_shimmed_status(const char **args);
/* The fixture: a fresh dir and a broker under the shim; its end. */
void		 fault_setup(void);
void		 fault_teardown(void);
/* Arm (on) or disarm the fault named in tests/fault.c. */
void		 arm(const char *fault, int on);
/* Write the tool table json in b's dir: its path, until the next call. */
const char	*tool_table(const char *json);
/* A fresh broker in a fresh dir is coming: b.dir names it for the table. */
void		 shim_prepare(void);
/*
 * Start it with the tool table tools, fault armed (if not NULL), and its
 * workers under the shim; with --kill-grace grace if it is not NULL.  c
 * to it.
 */
void		 shim_start(const char *tools, const char *fault,
		    const char *grace);
/* Submit one async job of tool, which must start: its ticket into t. */
/* Call line, a batch_execute that must be taken: its ticket into t;
 * the answer (caller puts). */
json_object	*taken(const char *line, char t[32]);
void		 submit_tool(const char *tool, char t[32]);
/* Call method on ticket t (cancel_job, wait_job): the answer. */
json_object	*on_ticket(const char *method, const char *t);
/*
 * Whether the tool pid (a group leader) ends within 10 s; if not, it is
 * killed, and the worker the test stopped (if > 0) is let go.
 */
int		 tool_ends(pid_t pid, pid_t stopped);
/* Submit SUBMIT, which must be taken: its ticket (borrowed from *r). */
const char	*submit_ticket(json_object **r);
/* r is storage_error (-32004) whose reason holds why. */
void		 assert_storage_error(json_object *r, const char *why);
/* The broker answers server_status. */
void		 assert_serving(void);
/* Wait for the job ticket's end: it must be done. */
void		 wait_done(const char *ticket);

#endif
