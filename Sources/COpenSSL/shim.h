#ifndef STEWARD_COPENSSL_SHIM_H
#define STEWARD_COPENSSL_SHIM_H
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

/* EVP_PKEY_EC is a macro over a NID; exported as a constant for Swift. */
static const int steward_evp_pkey_ec = EVP_PKEY_EC;
#endif
