#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unicode/uspoof.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
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
static __typeof__(u_strFromUTF8) *p_u_strFromUTF8;
static __typeof__(u_strToUTF8) *p_u_strToUTF8;

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
          && STEWARD_RESOLVE(handle, unorm2_getNFKCCasefoldInstance) && STEWARD_RESOLVE(handle, unorm2_normalize)
          && STEWARD_RESOLVE(handle, u_strFromUTF8) && STEWARD_RESOLVE(handle, u_strToUTF8))) {
        snprintf(load_error, sizeof load_error, "%s: %s", STEWARD_ICU_LIBRARY, dlerror());
        return 0;
    }
    return 1;
}

static pthread_key_t scratch_key;
static void free_scratch(void *p);

static void setup(void) {
    if (!load()) return;
    if (pthread_key_create(&scratch_key, free_scratch) != 0) {
        snprintf(load_error, sizeof load_error, "no thread-local storage for ICU buffers");
        return;
    }
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

/* Per-thread buffers of steward_username_keys, grown as needed and kept for the thread's life. */
typedef struct {
    UChar *text, *folded, *skeleton;
    int32_t text_capacity, folded_capacity, skeleton_capacity;
    char *folded8, *skeleton8;
    int32_t folded8_capacity, skeleton8_capacity;
    USpoofCheckResult *result;
} scratch;

static void free_scratch(void *p) {
    scratch *s = p;
    if (!s) return;
    free(s->text); free(s->folded); free(s->skeleton); free(s->folded8); free(s->skeleton8);
    if (s->result) p_uspoof_closeCheckResult(s->result);
    free(s);
}

static scratch *thread_scratch(void) {
    scratch *s = pthread_getspecific(scratch_key);
    if (s) return s;
    s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (pthread_setspecific(scratch_key, s) != 0) { free(s); return NULL; }
    return s;
}

static int grow(void **buffer, int32_t *capacity, int32_t needed, size_t unit) {
    if (needed <= *capacity) return 1;
    int32_t wanted = needed < 64 ? 64 : needed;
    void *bigger = realloc(*buffer, (size_t)wanted * unit);
    if (!bigger) return 0;
    *buffer = bigger;
    *capacity = wanted;
    return 1;
}
#define STEWARD_GROW(s, field, needed) grow((void **)&(s)->field, &(s)->field##_capacity, (needed), sizeof *(s)->field)

/* Runs an ICU call that writes UTF-16 into (out, capacity), growing the buffer once on overflow. */
#define STEWARD_FILL(s, field, length, call) do { \
        UErrorCode status = U_ZERO_ERROR; \
        length = (call); \
        if (status == U_BUFFER_OVERFLOW_ERROR) { \
            if (!STEWARD_GROW(s, field, length + 1)) return -1; \
            status = U_ZERO_ERROR; \
            length = (call); \
        } \
        if (U_FAILURE(status)) return -1; \
    } while (0)

static int to_utf8(char **out, int32_t *capacity, int32_t *length, const UChar *text, int32_t text_length) {
    /* A UTF-16 unit becomes at most three bytes of UTF-8. */
    if (text_length > INT32_MAX / 3 - 1) return 0;
    if (!grow((void **)out, capacity, text_length * 3 + 1, 1)) return 0;
    UErrorCode status = U_ZERO_ERROR;
    p_u_strToUTF8(*out, *capacity, length, text, text_length, &status);
    return U_SUCCESS(status);
}

int steward_username_keys(const char *text, int32_t length, steward_username_keys_result *out) {
    pthread_once(&once, setup);
    if (!checker || !casefold || length < 0) return -1;
    scratch *s = thread_scratch();
    if (!s) return -1;
    /* UTF-8 never has fewer bytes than UTF-16 has units. */
    if (!STEWARD_GROW(s, text, length + 1)) return -1;
    int32_t n16 = 0;
    UErrorCode status = U_ZERO_ERROR;
    p_u_strFromUTF8(s->text, s->text_capacity, &n16, text, length, &status);
    if (U_FAILURE(status)) return -1;

    int ascii = 1;
    for (int32_t i = 0; i < length; i++) if ((unsigned char)text[i] >= 0x80) { ascii = 0; break; }
    if (ascii) {
        /* ICU's own first answer for text that allows every character: ASCII only is USPOOF_ASCII. */
        out->level = 1;
    } else {
        if (!s->result) {
            s->result = p_uspoof_openCheckResult(&status);
            if (U_FAILURE(status)) { s->result = NULL; return -1; }
        }
        p_uspoof_check2(checker, s->text, n16, s->result, &status);
        URestrictionLevel level = p_uspoof_getCheckResultRestrictionLevel(s->result, &status);
        if (U_FAILURE(status)) return -1;
        switch (level) {
        case USPOOF_ASCII: out->level = 1; break;
        case USPOOF_SINGLE_SCRIPT_RESTRICTIVE: out->level = 2; break;
        case USPOOF_HIGHLY_RESTRICTIVE: out->level = 3; break;
        case USPOOF_MODERATELY_RESTRICTIVE: out->level = 4; break;
        case USPOOF_MINIMALLY_RESTRICTIVE: out->level = 5; break;
        default: out->level = 6; break;
        }
    }

    if (!STEWARD_GROW(s, folded, n16 * 3 + 16)) return -1;
    int32_t nf = 0;
    STEWARD_FILL(s, folded, nf, p_unorm2_normalize(casefold, s->text, n16, s->folded, s->folded_capacity, &status));
    if (!STEWARD_GROW(s, skeleton, nf * 3 + 16)) return -1;
    int32_t nk = 0;
    STEWARD_FILL(s, skeleton, nk, p_uspoof_getSkeleton(checker, 0, s->folded, nf, s->skeleton, s->skeleton_capacity, &status));

    if (!to_utf8(&s->folded8, &s->folded8_capacity, &out->folded_length, s->folded, nf)) return -1;
    if (!to_utf8(&s->skeleton8, &s->skeleton8_capacity, &out->skeleton_length, s->skeleton, nk)) return -1;
    out->folded = s->folded8;
    out->skeleton = s->skeleton8;
    return 0;
}
