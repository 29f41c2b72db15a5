/* The floor for any tool built on libpq: connect, ask `select 1`, print the answer, disconnect.
 * Built and timed by bench/migrate_bench.py (gcc and libpq-dev come from scripts/install-deps.sh).
 *
 *   libpq_floor CONNINFO
 */
#include <libpq-fe.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: libpq_floor CONNINFO\n");
        return 64;
    }
    PGconn *connection = PQconnectdb(argv[1]);
    if (PQstatus(connection) != CONNECTION_OK) {
        fprintf(stderr, "libpq_floor: cannot connect\n");
        PQfinish(connection);
        return 1;
    }
    PGresult *result = PQexec(connection, "select 1");
    int ok = PQresultStatus(result) == PGRES_TUPLES_OK;
    if (ok) puts(PQgetvalue(result, 0, 0));
    PQclear(result);
    PQfinish(connection);
    return ok ? 0 : 1;
}
