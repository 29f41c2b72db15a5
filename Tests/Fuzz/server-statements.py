#!/usr/bin/env python3
"""How the server itself reads SQL texts, for the migration scanner's differential test.

Usage: server-statements.py WHOLE_URL PIECES_URL CASES.jsonl
Reads JSON lines {"id", "text", "pieces"} and writes JSON lines {"id", "server", "pieces"} to stdout:
  server: the whole text sent as ONE simple-protocol query to WHOLE_URL (the server splits it), one [tag, rows]
          per statement;
  pieces: each piece sent to PIECES_URL alone with the extended protocol (as Steward sends statements), one [tag, rows] each.
A statement that fails gives ["ERROR <sqlstate> <message>", []] and ends that side; an empty query (a text of
comments only) gives nothing. Both sides run in autocommit on their
own connection; each case starts with RESET ALL and ROLLBACK of anything left open.
"""
import json
import sys

import psycopg


def error_tag(error):
    # The primary message only: where it points differs between a whole text and one piece of it.
    message = error.diag.message_primary or str(error).split("\n")[0]
    return "ERROR " + (error.sqlstate or "?") + " " + message


def rows_of(cur):
    if cur.description is None:
        return []
    return [[None if v is None else str(v) for v in row] for row in cur.fetchall()]


def fresh(conn):
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.execute("rollback")  # a text that ran BEGIN leaves its block open
    with conn.cursor() as cur:
        cur.execute("reset all")
        cur.execute("set standard_conforming_strings = on")


def server_reading(conn, text):
    results = []
    fresh(conn)
    with conn.cursor() as cur:
        try:
            cur.execute(text)  # no parameters: psycopg sends it with the simple protocol, the server splits it
            while True:
                if cur.pgresult is not None and cur.pgresult.status != psycopg.pq.ExecStatus.EMPTY_QUERY:
                    results.append([cur.statusmessage or "", rows_of(cur)])
                if not cur.nextset():
                    break
        except psycopg.Error as error:
            results.append([error_tag(error), []])
    return results


def pieces_reading(conn, pieces):
    results = []
    fresh(conn)
    with conn.cursor() as cur:
        for piece in pieces:
            try:
                cur.execute(piece, prepare=True)  # Parse/Bind/Execute: the server refuses two statements in one
                results.append([cur.statusmessage or "", rows_of(cur)])
            except psycopg.Error as error:
                results.append([error_tag(error), []])
                # A piece that fails is worded as the server's own split would word it: the same statement
                # analysed under the simple protocol (a $1 outside a body is "there is no parameter" there, and
                # "bind message supplies 0 parameters" or another error under Parse/Bind). A piece that only the
                # extended protocol refuses (two statements in one) keeps the extended protocol's error.
                try:
                    cur.execute(piece, prepare=False)
                except psycopg.Error as simple:
                    results[-1] = [error_tag(simple), []]
                break
    return results


def main():
    whole_url, pieces_url, path = sys.argv[1], sys.argv[2], sys.argv[3]
    with psycopg.connect(whole_url, autocommit=True) as whole, psycopg.connect(pieces_url, autocommit=True) as split:
        whole.prepare_threshold = None
        split.prepare_threshold = 0
        with open(path, encoding="utf-8", newline="") as cases:
            for line in cases:
                case = json.loads(line)
                out = {"id": case["id"], "server": server_reading(whole, case["text"]),
                       "pieces": pieces_reading(split, case["pieces"])}
                sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
