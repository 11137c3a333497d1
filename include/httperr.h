/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTPERR_H
#define CMDGATE_HTTPERR_H

struct evhttp_request;

/*
 * Answer req with status and a JSON-RPC error (id null, data.type type,
 * reason for a person): MCP over HTTP's refusals (cmdgated(8)).
 */
void	httperr_reply(struct evhttp_request *, int status, int code,
	    const char *type, const char *reason);

#endif
