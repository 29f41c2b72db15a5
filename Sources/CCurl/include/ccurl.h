#ifndef STEWARD_CCURL_H
#define STEWARD_CCURL_H
/* libcurl, opened on first use (dlopen of libcurl.so.4) rather than linked: only the Storage, Apple and webhook
   calls need it, and its dependency tree costs every start of every command. <curl/curl.h> is here for its types
   and constants; call only the steward_ functions below (a direct curl_ call would not link). */
#include <curl/curl.h>

/* NULL when libcurl is loaded (and globally initialised), else why not. Every function below loads it first. */
const char *steward_curl_load_error(void);

CURL *steward_curl_easy_init(void);
void steward_curl_easy_cleanup(CURL *h);
void steward_curl_easy_reset(CURL *h);
CURLcode steward_curl_easy_perform(CURL *h);
const char *steward_curl_easy_strerror(CURLcode code);
struct curl_slist *steward_curl_slist_append(struct curl_slist *list, const char *text);
void steward_curl_slist_free_all(struct curl_slist *list);

/* curl_easy_setopt and curl_easy_getinfo are variadic: one typed wrapper per kind of argument. */
CURLcode steward_curl_setopt_long(CURL *h, CURLoption o, long v);
CURLcode steward_curl_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode steward_curl_setopt_pointer(CURL *h, CURLoption o, void *v);
CURLcode steward_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
typedef size_t (*steward_curl_data_callback)(char *data, size_t size, size_t count, void *context);
CURLcode steward_curl_setopt_callback(CURL *h, CURLoption o, steward_curl_data_callback f);
CURLcode steward_curl_getinfo_long(CURL *h, CURLINFO i, long *v);

/* A multi handle holds the connection cache of the transfers run through it. */
CURLM *steward_curl_multi_init(void);
void steward_curl_multi_cleanup(CURLM *m);
/* Runs one transfer of `easy` through `multi`, checking `*cancelled` (set from any thread with steward_flag_set)
   at least every 100 ms: once set, the transfer is aborted with CURLE_ABORTED_BY_CALLBACK. */
CURLcode steward_curl_perform_cancellable(CURL *easy, CURLM *multi, const int *cancelled);

/* A flag (an int owned by the caller, starting at 0) set once from any thread and read from any other, atomically. */
void steward_flag_set(int *flag);
int steward_flag_get(const int *flag);

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
static const CURLoption steward_CURLOPT_MAXREDIRS = CURLOPT_MAXREDIRS;
static const CURLINFO steward_CURLINFO_RESPONSE_CODE = CURLINFO_RESPONSE_CODE;
static const CURLINFO steward_CURLINFO_REQUEST_SIZE = CURLINFO_REQUEST_SIZE;
#endif
