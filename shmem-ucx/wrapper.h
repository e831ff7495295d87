/* Input to bindgen (see build.rs): the UCP API from the system's libucx-dev. */
#include <ucp/api/ucp.h>
