#ifndef STEWARD_CINIH_SHIM_H
#define STEWARD_CINIH_SHIM_H
#include <ini.h>
#endif
