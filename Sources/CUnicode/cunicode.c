#include <limits.h>
#include <pthread.h>
#include <unicode/uspoof.h>
#include <unicode/unorm2.h>
#include "cunicode.h"

static USpoofChecker *checker;
static const UNormalizer2 *casefold;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void setup(void) {
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker *c = uspoof_open(&status);
    if (U_SUCCESS(status)) {
        uspoof_setChecks(c, USPOOF_RESTRICTION_LEVEL | USPOOF_CONFUSABLE | USPOOF_AUX_INFO, &status);
        uspoof_setRestrictionLevel(c, USPOOF_UNRESTRICTIVE);
    }
    checker = U_SUCCESS(status) ? c : NULL;
    status = U_ZERO_ERROR;
    casefold = unorm2_getNFKCCasefoldInstance(&status);
    if (U_FAILURE(status)) casefold = NULL;
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
    int32_t n = uspoof_getSkeleton(checker, 0, (const UChar *)text, length, (UChar *)out, capacity, &status);
    return result(n, status);
}

int32_t steward_nfkc_casefold(const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity) {
    pthread_once(&once, setup);
    if (!casefold) return INT32_MIN;
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = unorm2_normalize(casefold, (const UChar *)text, length, (UChar *)out, capacity, &status);
    return result(n, status);
}

int32_t steward_restriction_level(const uint16_t *text, int32_t length) {
    pthread_once(&once, setup);
    if (!checker) return -1;
    UErrorCode status = U_ZERO_ERROR;
    USpoofCheckResult *r = uspoof_openCheckResult(&status);
    if (U_FAILURE(status)) return -1;
    uspoof_check2(checker, (const UChar *)text, length, r, &status);
    URestrictionLevel level = uspoof_getCheckResultRestrictionLevel(r, &status);
    uspoof_closeCheckResult(r);
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
