/* conv.c - placeholder; its owner is writing it. */
#include "config.h"
