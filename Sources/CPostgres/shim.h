#ifndef STEWARD_CPOSTGRES_SHIM_H
#define STEWARD_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

/* Diagnostic field codes are char-literal macros, which Swift cannot import. */
static const int steward_pg_diag_severity = PG_DIAG_SEVERITY_NONLOCALIZED;
static const int steward_pg_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int steward_pg_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;
static const int steward_pg_diag_message_detail = PG_DIAG_MESSAGE_DETAIL;
static const int steward_pg_diag_message_hint = PG_DIAG_MESSAGE_HINT;
static const int steward_pg_diag_statement_position = PG_DIAG_STATEMENT_POSITION;
static const int steward_pg_diag_internal_position = PG_DIAG_INTERNAL_POSITION;
static const int steward_pg_diag_internal_query = PG_DIAG_INTERNAL_QUERY;
static const int steward_pg_diag_context = PG_DIAG_CONTEXT;
static const int steward_pg_diag_schema_name = PG_DIAG_SCHEMA_NAME;
static const int steward_pg_diag_table_name = PG_DIAG_TABLE_NAME;
static const int steward_pg_diag_constraint_name = PG_DIAG_CONSTRAINT_NAME;

#endif
