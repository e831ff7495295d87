/* Input to bindgen (see build.rs): the PMIx client API from the system's libpmix-dev. */
#include <pmix.h>
