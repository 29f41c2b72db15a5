/*
 * Steward local shim: the stand-in for the one power the hosted platform's supautils extension gives `postgres`
 * over tables it does not own: CREATE POLICY, ALTER POLICY (and its RENAME) and DROP POLICY on the tables listed in
 * supautils' `policy_grants` (storage.objects for the app). Plain PostgreSQL lets only a table's owner do that;
 * supautils hooks the utility commands and runs those few as the superuser. This module does the same, and nothing
 * else: the policy command alone runs as the bootstrap superuser, so every other owner-only command (disabling the
 * delete guard trigger, ALTER TABLE, DROP TRIGGER, replacing a storage function) is still refused as it is on the
 * platform, and `postgres` stays no member of supabase_storage_admin.
 *
 * Loaded by scripts/local-db.sh through shared_preload_libraries; inert unless the database (or role) sets
 *   supautils_stand_in.policy_grants = 'postgres:storage.objects[,role:schema.table…]'
 * which scripts/local-db.sh does for every database it creates unless STEWARD_PG_SUPAUTILS=off. Only a superuser
 * may set it. Never load it into a real project: the platform has supautils itself.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_MODULE_MAGIC;

void _PG_init(void);

static ProcessUtility_hook_type previous_hook = NULL;
static char *policy_grants = NULL;

/* The table a policy command names, or NULL for any other command. */
static RangeVar *
policy_target(Node *statement)
{
	switch (nodeTag(statement))
	{
		case T_CreatePolicyStmt:
			return ((CreatePolicyStmt *) statement)->table;
		case T_AlterPolicyStmt:
			return ((AlterPolicyStmt *) statement)->table;
		case T_RenameStmt:
			if (((RenameStmt *) statement)->renameType == OBJECT_POLICY)
				return ((RenameStmt *) statement)->relation;
			return NULL;
		case T_DropStmt:
			{
				DropStmt   *drop = (DropStmt *) statement;
				List	   *names;

				/* One policy per DROP POLICY; its name list is the table's name, then the policy's. */
				if (drop->removeType != OBJECT_POLICY || list_length(drop->objects) != 1)
					return NULL;
				names = (List *) linitial(drop->objects);
				if (list_length(names) < 2)
					return NULL;
				return makeRangeVarFromNameList(list_truncate(list_copy(names), list_length(names) - 1));
			}
		default:
			return NULL;
	}
}

/* Whether policy_grants lists exactly `role:schema.table`. */
static bool
granted(const char *role, const char *schema, const char *table)
{
	char	   *wanted;
	char	   *list;
	char	   *entry;
	char	   *save = NULL;
	bool		found = false;

	if (policy_grants == NULL || policy_grants[0] == '\0')
		return false;
	wanted = psprintf("%s:%s.%s", role, schema, table);
	list = pstrdup(policy_grants);
	for (entry = strtok_r(list, ", ", &save); entry != NULL; entry = strtok_r(NULL, ", ", &save))
	{
		if (strcmp(entry, wanted) == 0)
		{
			found = true;
			break;
		}
	}
	pfree(list);
	pfree(wanted);
	return found;
}

static void
run_next(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree, ProcessUtilityContext context,
		 ParamListInfo params, QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (previous_hook)
		previous_hook(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
}

static void
stand_in_hook(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree, ProcessUtilityContext context,
			  ParamListInfo params, QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	RangeVar   *target = policy_target(pstmt->utilityStmt);
	Oid			relation = InvalidOid;
	Oid			owner = InvalidOid;
	Oid			saved_user;
	int			saved_context;

	if (target != NULL && policy_grants != NULL && policy_grants[0] != '\0')
		relation = RangeVarGetRelid(target, NoLock, true);
	if (OidIsValid(relation))
	{
		HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relation));

		if (HeapTupleIsValid(tuple))
		{
			owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
			ReleaseSysCache(tuple);
		}
		if (OidIsValid(owner) && owner != GetUserId()
			&& !granted(GetUserNameFromId(GetUserId(), false), get_namespace_name(get_rel_namespace(relation)),
						get_rel_name(relation)))
			owner = InvalidOid;
	}
	if (!OidIsValid(owner) || owner == GetUserId())
	{
		run_next(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
		return;
	}
	/* The policy command alone, as the superuser; the caller's identity comes back whatever happens. */
	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, saved_context | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		run_next(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(saved_user, saved_context);
	}
	PG_END_TRY();
}

void
_PG_init(void)
{
	DefineCustomStringVariable("supautils_stand_in.policy_grants",
							   "Roles that may create, alter and drop policies on tables they do not own (role:schema.table, …).",
							   NULL, &policy_grants, "", PGC_SUSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("supautils_stand_in");
	previous_hook = ProcessUtility_hook;
	ProcessUtility_hook = stand_in_hook;
}
