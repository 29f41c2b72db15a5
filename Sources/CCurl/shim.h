#ifndef STEWARD_CCURL_SHIM_H
#define STEWARD_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic: one typed wrapper per kind of argument. */
static inline CURLcode steward_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode steward_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode steward_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode steward_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*steward_curl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode steward_curl_setopt_callback(CURL *h, CURLoption o, steward_curl_data_callback f) { return curl_easy_setopt(h, o, f); }
static inline CURLcode steward_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }

static const CURLoption steward_CURLOPT_URL = CURLOPT_URL;
static const CURLoption steward_CURLOPT_CUSTOMREQUEST = CURLOPT_CUSTOMREQUEST;
static const CURLoption steward_CURLOPT_HTTPHEADER = CURLOPT_HTTPHEADER;
static const CURLoption steward_CURLOPT_POSTFIELDS = CURLOPT_POSTFIELDS;
static const CURLoption steward_CURLOPT_POSTFIELDSIZE = CURLOPT_POSTFIELDSIZE;
static const CURLoption steward_CURLOPT_NOBODY = CURLOPT_NOBODY;
static const CURLoption steward_CURLOPT_HTTPGET = CURLOPT_HTTPGET;
static const CURLoption steward_CURLOPT_WRITEFUNCTION = CURLOPT_WRITEFUNCTION;
static const CURLoption steward_CURLOPT_WRITEDATA = CURLOPT_WRITEDATA;
static const CURLoption steward_CURLOPT_HEADERFUNCTION = CURLOPT_HEADERFUNCTION;
static const CURLoption steward_CURLOPT_HEADERDATA = CURLOPT_HEADERDATA;
static const CURLoption steward_CURLOPT_CONNECTTIMEOUT_MS = CURLOPT_CONNECTTIMEOUT_MS;
static const CURLoption steward_CURLOPT_TIMEOUT_MS = CURLOPT_TIMEOUT_MS;
static const CURLoption steward_CURLOPT_NOSIGNAL = CURLOPT_NOSIGNAL;
static const CURLoption steward_CURLOPT_USERAGENT = CURLOPT_USERAGENT;
static const CURLoption steward_CURLOPT_SSL_VERIFYPEER = CURLOPT_SSL_VERIFYPEER;
static const CURLoption steward_CURLOPT_SSL_VERIFYHOST = CURLOPT_SSL_VERIFYHOST;
static const CURLoption steward_CURLOPT_CAINFO = CURLOPT_CAINFO;
static const CURLoption steward_CURLOPT_PROTOCOLS_STR = CURLOPT_PROTOCOLS_STR;
static const CURLINFO steward_CURLINFO_RESPONSE_CODE = CURLINFO_RESPONSE_CODE;
#endif
