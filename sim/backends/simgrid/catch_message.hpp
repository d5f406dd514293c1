/* catch_message.hpp - SimGrid's calls throw; the C side of the backend takes
 * a status and one line.  spg::catch_message runs a call and turns whatever
 * it throws into that line. */
#ifndef SPARSIM_CATCH_MESSAGE_HPP
#define SPARSIM_CATCH_MESSAGE_HPP

#include <cstdio>
#include <exception>

namespace spg {

/* runs f(); 0, or -1 with what it threw as the message in err */
template <class F> int catch_message(F f, char* err, size_t errlen)
{
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(err, errlen, "%s", e.what());
  } catch (...) {
    std::snprintf(err, errlen, "unknown error");
  }
  return -1;
}

} // namespace spg

#endif
