#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "ccurl.h"

static __typeof__(curl_global_init) *p_global_init;
static __typeof__(curl_easy_init) *p_easy_init;
static __typeof__(curl_easy_cleanup) *p_easy_cleanup;
static __typeof__(curl_easy_reset) *p_easy_reset;
static __typeof__(curl_easy_perform) *p_easy_perform;
static __typeof__(curl_easy_strerror) *p_easy_strerror;
static __typeof__(curl_easy_setopt) *p_easy_setopt;
static __typeof__(curl_easy_getinfo) *p_easy_getinfo;
static __typeof__(curl_slist_append) *p_slist_append;
static __typeof__(curl_slist_free_all) *p_slist_free_all;
static __typeof__(curl_multi_init) *p_multi_init;
static __typeof__(curl_multi_cleanup) *p_multi_cleanup;
static __typeof__(curl_multi_add_handle) *p_multi_add_handle;
static __typeof__(curl_multi_remove_handle) *p_multi_remove_handle;
static __typeof__(curl_multi_perform) *p_multi_perform;
static __typeof__(curl_multi_poll) *p_multi_poll;
static __typeof__(curl_multi_info_read) *p_multi_info_read;
static __typeof__(curl_multi_strerror) *p_multi_strerror;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

#define STEWARD_RESOLVE(handle, name) ((p_##name = (__typeof__(p_##name))dlsym(handle, "curl_" #name)) != NULL)

static void load(void) {
    void *handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
    if (!(STEWARD_RESOLVE(handle, global_init) && STEWARD_RESOLVE(handle, easy_init) && STEWARD_RESOLVE(handle, easy_cleanup)
          && STEWARD_RESOLVE(handle, easy_reset) && STEWARD_RESOLVE(handle, easy_perform) && STEWARD_RESOLVE(handle, easy_strerror)
          && STEWARD_RESOLVE(handle, easy_setopt) && STEWARD_RESOLVE(handle, easy_getinfo) && STEWARD_RESOLVE(handle, slist_append)
          && STEWARD_RESOLVE(handle, slist_free_all) && STEWARD_RESOLVE(handle, multi_init) && STEWARD_RESOLVE(handle, multi_cleanup)
          && STEWARD_RESOLVE(handle, multi_add_handle) && STEWARD_RESOLVE(handle, multi_remove_handle)
          && STEWARD_RESOLVE(handle, multi_perform) && STEWARD_RESOLVE(handle, multi_poll) && STEWARD_RESOLVE(handle, multi_info_read)
          && STEWARD_RESOLVE(handle, multi_strerror))) {
        snprintf(load_error, sizeof load_error, "libcurl.so.4: %s", dlerror());
        return;
    }
    CURLcode code = p_global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init: %s", p_easy_strerror(code));
        return;
    }
    loaded = 1;
}

static int ready(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *steward_curl_load_error(void) { return ready() ? NULL : load_error; }

CURL *steward_curl_easy_init(void) { return ready() ? p_easy_init() : NULL; }
void steward_curl_easy_cleanup(CURL *h) { if (ready() && h) p_easy_cleanup(h); }
void steward_curl_easy_reset(CURL *h) { if (ready()) p_easy_reset(h); }
CURLcode steward_curl_easy_perform(CURL *h) { return ready() ? p_easy_perform(h) : CURLE_FAILED_INIT; }
const char *steward_curl_easy_strerror(CURLcode code) { return ready() ? p_easy_strerror(code) : load_error; }
struct curl_slist *steward_curl_slist_append(struct curl_slist *list, const char *text) {
    return ready() ? p_slist_append(list, text) : NULL;
}
void steward_curl_slist_free_all(struct curl_slist *list) { if (ready()) p_slist_free_all(list); }

CURLcode steward_curl_setopt_long(CURL *h, CURLoption o, long v) { return ready() ? p_easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode steward_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return ready() ? p_easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode steward_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return ready() ? p_easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode steward_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return ready() ? p_easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode steward_curl_setopt_callback(CURL *h, CURLoption o, steward_curl_data_callback f) {
    return ready() ? p_easy_setopt(h, o, f) : CURLE_FAILED_INIT;
}
CURLcode steward_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return ready() ? p_easy_getinfo(h, i, v) : CURLE_FAILED_INIT; }

CURLM *steward_curl_multi_init(void) { return ready() ? p_multi_init() : NULL; }
void steward_curl_multi_cleanup(CURLM *m) { if (ready() && m) p_multi_cleanup(m); }

CURLcode steward_curl_perform_cancellable(CURL *easy, CURLM *multi, const int *cancelled) {
    if (!ready()) return CURLE_FAILED_INIT;
    if (__atomic_load_n(cancelled, __ATOMIC_ACQUIRE)) return CURLE_ABORTED_BY_CALLBACK;
    if (p_multi_add_handle(multi, easy) != CURLM_OK) return CURLE_FAILED_INIT;
    CURLcode result = CURLE_OK;
    int finished = 0;
    while (!finished) {
        int running = 0;
        CURLMcode mc = p_multi_perform(multi, &running);
        if (mc != CURLM_OK) { result = CURLE_FAILED_INIT; break; }
        int queued = 0;
        CURLMsg *message;
        while ((message = p_multi_info_read(multi, &queued)) != NULL) {
            if (message->msg == CURLMSG_DONE && message->easy_handle == easy) {
                result = message->data.result;
                finished = 1;
            }
        }
        if (finished) break;
        if (__atomic_load_n(cancelled, __ATOMIC_ACQUIRE)) { result = CURLE_ABORTED_BY_CALLBACK; break; }
        /* Wakes for socket activity or after 100 ms at most, so a cancellation is seen within that. */
        mc = p_multi_poll(multi, NULL, 0, 100, NULL);
        if (mc != CURLM_OK) { result = CURLE_FAILED_INIT; break; }
    }
    p_multi_remove_handle(multi, easy);
    return result;
}

void steward_flag_set(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELEASE); }
int steward_flag_get(const int *flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }
