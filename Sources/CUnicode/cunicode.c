#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <unicode/uspoof.h>
#include <unicode/unorm2.h>
#include <unicode/uvernum.h>
#include "cunicode.h"

/* ICU is opened on first use, not linked: only the username rules need it, and loading it costs every start of
   every command about a millisecond. The headers rename each function with the version (uspoof_open ->
   uspoof_open_72); the same macros give the names to look up. */
#define STEWARD_STR2(x) #x
#define STEWARD_STR(x) STEWARD_STR2(x)
#define STEWARD_ICU_LIBRARY "libicui18n.so." STEWARD_STR(U_ICU_VERSION_MAJOR_NUM)

static __typeof__(uspoof_open) *p_uspoof_open;
static __typeof__(uspoof_setChecks) *p_uspoof_setChecks;
static __typeof__(uspoof_setRestrictionLevel) *p_uspoof_setRestrictionLevel;
static __typeof__(uspoof_getSkeleton) *p_uspoof_getSkeleton;
static __typeof__(uspoof_openCheckResult) *p_uspoof_openCheckResult;
static __typeof__(uspoof_check2) *p_uspoof_check2;
static __typeof__(uspoof_getCheckResultRestrictionLevel) *p_uspoof_getCheckResultRestrictionLevel;
static __typeof__(uspoof_closeCheckResult) *p_uspoof_closeCheckResult;
static __typeof__(unorm2_getNFKCCasefoldInstance) *p_unorm2_getNFKCCasefoldInstance;
static __typeof__(unorm2_normalize) *p_unorm2_normalize;

static USpoofChecker *checker;
static const UNormalizer2 *casefold;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

#define STEWARD_RESOLVE(handle, name) \
    ((p_##name = (__typeof__(p_##name))dlsym(handle, STEWARD_STR(name))) != NULL)

static int load(void) {
    void *handle = dlopen(STEWARD_ICU_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return 0;
    }
    if (!(STEWARD_RESOLVE(handle, uspoof_open) && STEWARD_RESOLVE(handle, uspoof_setChecks)
          && STEWARD_RESOLVE(handle, uspoof_setRestrictionLevel) && STEWARD_RESOLVE(handle, uspoof_getSkeleton)
          && STEWARD_RESOLVE(handle, uspoof_openCheckResult) && STEWARD_RESOLVE(handle, uspoof_check2)
          && STEWARD_RESOLVE(handle, uspoof_getCheckResultRestrictionLevel) && STEWARD_RESOLVE(handle, uspoof_closeCheckResult)
          && STEWARD_RESOLVE(handle, unorm2_getNFKCCasefoldInstance) && STEWARD_RESOLVE(handle, unorm2_normalize))) {
        snprintf(load_error, sizeof load_error, "%s: %s", STEWARD_ICU_LIBRARY, dlerror());
        return 0;
    }
    return 1;
}

static void setup(void) {
    if (!load()) return;
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker *c = p_uspoof_open(&status);
    if (U_SUCCESS(status)) {
        p_uspoof_setChecks(c, USPOOF_RESTRICTION_LEVEL | USPOOF_CONFUSABLE | USPOOF_AUX_INFO, &status);
        p_uspoof_setRestrictionLevel(c, USPOOF_UNRESTRICTIVE);
    }
    checker = U_SUCCESS(status) ? c : NULL;
    if (!checker) snprintf(load_error, sizeof load_error, "ICU spoof checker: error %d", (int)status);
    status = U_ZERO_ERROR;
    casefold = p_unorm2_getNFKCCasefoldInstance(&status);
    if (U_FAILURE(status)) {
        casefold = NULL;
        snprintf(load_error, sizeof load_error, "ICU NFKC_Casefold: error %d", (int)status);
    }
}

const char *steward_unicode_load_error(void) {
    pthread_once(&once, setup);
    return (checker && casefold) ? NULL : load_error;
}

static int32_t result(int32_t length, UErrorCode status) {
    if (status == U_BUFFER_OVERFLOW_ERROR) return -length;
    if (U_FAILURE(status)) return INT32_MIN;
    return length;
}

int32_t steward_skeleton(const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity) {
    pthread_once(&once, setup);
    if (!checker) return INT32_MIN;
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = p_uspoof_getSkeleton(checker, 0, (const UChar *)text, length, (UChar *)out, capacity, &status);
    return result(n, status);
}

int32_t steward_nfkc_casefold(const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity) {
    pthread_once(&once, setup);
    if (!casefold) return INT32_MIN;
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = p_unorm2_normalize(casefold, (const UChar *)text, length, (UChar *)out, capacity, &status);
    return result(n, status);
}

int32_t steward_restriction_level(const uint16_t *text, int32_t length) {
    pthread_once(&once, setup);
    if (!checker) return -1;
    UErrorCode status = U_ZERO_ERROR;
    USpoofCheckResult *r = p_uspoof_openCheckResult(&status);
    if (U_FAILURE(status)) return -1;
    p_uspoof_check2(checker, (const UChar *)text, length, r, &status);
    URestrictionLevel level = p_uspoof_getCheckResultRestrictionLevel(r, &status);
    p_uspoof_closeCheckResult(r);
    if (U_FAILURE(status)) return -1;
    switch (level) {
    case USPOOF_ASCII: return 1;
    case USPOOF_SINGLE_SCRIPT_RESTRICTIVE: return 2;
    case USPOOF_HIGHLY_RESTRICTIVE: return 3;
    case USPOOF_MODERATELY_RESTRICTIVE: return 4;
    case USPOOF_MINIMALLY_RESTRICTIVE: return 5;
    default: return 6;
    }
}
