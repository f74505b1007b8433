// Package examples holds the traces bundled with ratesim: one per
// walkthrough of an algorithm, the boundary burst in every
// format and time style, a multi-user trace with costs and endpoints, an
// access log and a bursty trace to tune a policy on.
package examples

import "embed"

// FS holds the bundled traces, by file name:
//
//	fixed-window.csv     u1 at 1, 2, 3, 4, 11 and u2 at 4 (limit 3 per 10 s)
//	sliding-log.csv      u1 at 1, 3, 5, 8, 12, 13
//	sliding-counter.csv  u1 at 1, 3, 5, 8, 12, 13
//	token-bucket.csv     u1 at 0, 0, 0, 0, 5, 6 (capacity 3, rate 0.2/s)
//	leaky-bucket.csv     u1 at 0, 0, 0, 0, 5, 6 (capacity 3, rate 0.2/s)
//	sliding-buckets.csv  u1 at 20, 21, 22, 23, 30, 30.5, 31 (10 buckets)
//	boundary.csv         u1 at 7, 8, 9, 10, 11, 12: six requests in five
//	                     seconds that a fixed window of 3 per 10 s allows
//	boundary.yaml        the same trace in YAML
//	boundary.jsonl       the same trace in JSON Lines
//	millis.csv           the same trace in milliseconds (read with unit ms)
//	rfc3339.csv          the same trace as RFC 3339 times from
//	                     2024-01-01T00:00:00Z
//	multi-user.csv       several users with cost and endpoint columns
//	access.log           an nginx combined log: IPv4 and IPv6 clients, quoted
//	                     user agents, a "-" request, a logged-in user
//	bursty.csv           half an hour of bursty traffic from 38 users, 4000
//	                     requests as RFC 3339 times: the sweep example
//
// and one log of every log format, written from its documentation:
//
//	common.log           the Common Log Format
//	nginx-timed.log      combined with $request_time and $limit_req_status
//	upstreaminfo.log     ingress-nginx's log-format-upstream
//	alb.log              AWS ALB access logs
//	cloudfront.log       CloudFront standard logs
//	iis.log              IIS (W3C extended), its #Fields: changing
//	envoy.log            Envoy's default format
//	haproxy.log          HAProxy's httplog, with and without syslog headers
//	traefik.log          Traefik's Common Log Format
//	traefik-json.log     Traefik's JSON access log
//	caddy.log            Caddy's JSON access log
//
// Timestamps are in seconds unless the name says otherwise.
//
//go:embed *.csv *.yaml *.jsonl *.log
var FS embed.FS
