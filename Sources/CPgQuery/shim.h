#ifndef STEWARD_CPGQUERY_SHIM_H
#define STEWARD_CPGQUERY_SHIM_H
// PostgreSQL 15's own parser as a library (Debian: libpg-query-dev). Only the plain C API: the scan result is
// protobuf bytes, decoded in Swift, so protobuf-c's headers are not needed.
#include <pg_query.h>
#endif
