/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ringfence.h"

RF_EXPORT const char *rf_version(void)
{
    return RF_VERSION;
}
