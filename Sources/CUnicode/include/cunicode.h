#ifndef STEWARD_CUNICODE_H
#define STEWARD_CUNICODE_H
#include <stdint.h>
/* ICU's spoof checker and normaliser behind plain UTF-16 buffers. ICU headers stay in the .c file:
   importing them into Swift clashes with the ICU copy Foundation bundles. */

/* NULL when ICU is loaded and ready, else why not (the library missing, a symbol missing). ICU is opened on first use. */
const char *steward_unicode_load_error(void);

/* UTS #39 skeleton of text into out; returns the length written, or -(length needed) when capacity is too small,
   or INT32_MIN on an ICU error. */
int32_t steward_skeleton(const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity);

/* NFKC_Casefold of text into out; same return convention. */
int32_t steward_nfkc_casefold(const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity);

/* ICU restriction level of text (1 ASCII, 2 single script, 3 highly restrictive, 4 moderately restrictive,
   5 minimally restrictive, 6 unrestrictive), or -1 on error. */
int32_t steward_restriction_level(const uint16_t *text, int32_t length);

/* One username's keys and level at once, UTF-8 in and out. */
typedef struct {
    /* NFKC_Casefold of the text, and the UTS #39 skeleton of that; UTF-8, not NUL-terminated. */
    const char *folded;
    int32_t folded_length;
    const char *skeleton;
    int32_t skeleton_length;
    /* The text's restriction level, numbered as steward_restriction_level numbers it. */
    int32_t level;
} steward_username_keys_result;

/* Fills out for text (UTF-8, length bytes); returns 0, or -1 on an ICU error or invalid UTF-8. The strings point into
   buffers of the calling thread, valid until its next call. Same answers as steward_nfkc_casefold, then
   steward_skeleton of the folded form, and steward_restriction_level of text. */
int steward_username_keys(const char *text, int32_t length, steward_username_keys_result *out);

#endif
