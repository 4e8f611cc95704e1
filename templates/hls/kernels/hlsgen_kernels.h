// hlsgen HLS kernels: everything the generated top function calls.
#ifndef HLSGEN_KERNELS_H
#define HLSGEN_KERNELS_H

#include "channels.h"
#include "dwc.h"
#include "dwconv.h"
#include "eltwise.h"
#include "epilogue.h"
#include "fork.h"
#include "hlsgen_common.h"
#include "mvu.h"
#include "pool.h"
#include "reorder.h"
#include "resize.h"
#include "sliding_window.h"

#endif
