/* sections.h - the flow engine's code in two named sections, so that the
 * wall-time profile (sim/driver/wall_profile.c) can tell its network model
 * (fluid.c) and its engine (the event loop and the coroutines) from the rest
 * of sparsim: the linker marks each section's bounds (__start_NAME and
 * __stop_NAME), and a sampled address between them is in that class. */
#ifndef SPARSIM_FLOW_SECTIONS_H
#define SPARSIM_FLOW_SECTIONS_H

#define SPF_NETMODEL __attribute__((section("spf_netmodel")))
#define SPF_ENGINE __attribute__((section("spf_engine")))

#endif
