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

#endif
