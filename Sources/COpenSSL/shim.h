#ifndef STEWARD_COPENSSL_SHIM_H
#define STEWARD_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/sha.h>
#endif
