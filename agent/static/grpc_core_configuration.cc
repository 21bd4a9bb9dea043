// gRPC core's plugin set for the static phone agent (MEMFLEET_AGENT_STATIC builds only).
//
// gRPC builds its configuration on first use by calling grpc_core::BuildCoreConfiguration, which
// libgrpc defines with every plugin gRPC ships: xDS (resolvers, cluster managers, RBAC and fault
// injection filters, certificate providers), RLS, grpclb and the load-balancing policies that only a
// service config selects. The agent dials one server address with pick_first and no service config, so
// in the static link this definition comes first and the archive member defining gRPC's is never pulled
// in, and with it none of those plugins: a third of libgrpc's code, which otherwise runs its
// registration at start-up and stays mapped (docs/performance.md, "Agent footprint").
//
// The calls and their order are gRPC's own (the handshaker order matters: TCP connect must be
// registered after HTTP CONNECT), minus the plugins named above. Declared here because gRPC does not
// install its core headers; the signatures are those of the gRPC the static build links (Debian 12's
// 1.51): a mismatch fails the link, it cannot misbehave at run time.
namespace grpc_core {
class CoreConfiguration {
 public:
  class Builder;
};
using Builder = CoreConfiguration::Builder;

void RegisterHttpConnectHandshaker(Builder*);
void RegisterTCPConnectHandshaker(Builder*);
void RegisterPickFirstLbPolicy(Builder*);
void RegisterRoundRobinLbPolicy(Builder*);
void BuildClientChannelConfiguration(Builder*);
void SecurityRegisterHandshakerFactories(Builder*);
void RegisterClientAuthorityFilter(Builder*);
void RegisterChannelIdleFilters(Builder*);
void RegisterHttpFilters(Builder*);
void RegisterDeadlineFilter(Builder*);
void RegisterMessageSizeFilter(Builder*);
void RegisterServiceConfigChannelArgFilter(Builder*);
void RegisterResourceQuota(Builder*);
void RegisterAresDnsResolver(Builder*);
void RegisterNativeDnsResolver(Builder*);
void RegisterSockaddrResolver(Builder*);
void RegisterHttpProxyMapper(Builder*);
void RegisterSecurityFilters(Builder*);
void RegisterBuiltins(Builder*);
void BuildCoreConfiguration(Builder* builder);
}  // namespace grpc_core

namespace grpc_event_engine::experimental {
void RegisterEventEngineChannelArgPreconditioning(grpc_core::Builder*);
}  // namespace grpc_event_engine::experimental

void grpc_core::BuildCoreConfiguration(Builder* builder) {
  grpc_event_engine::experimental::RegisterEventEngineChannelArgPreconditioning(builder);
  RegisterHttpConnectHandshaker(builder);
  RegisterTCPConnectHandshaker(builder);
  RegisterPickFirstLbPolicy(builder);
  RegisterRoundRobinLbPolicy(builder);
  BuildClientChannelConfiguration(builder);
  SecurityRegisterHandshakerFactories(builder);
  RegisterClientAuthorityFilter(builder);
  RegisterChannelIdleFilters(builder);
  RegisterHttpFilters(builder);
  RegisterDeadlineFilter(builder);
  RegisterMessageSizeFilter(builder);
  RegisterServiceConfigChannelArgFilter(builder);
  RegisterResourceQuota(builder);
  RegisterAresDnsResolver(builder);
  RegisterNativeDnsResolver(builder);
  RegisterSockaddrResolver(builder);
  RegisterHttpProxyMapper(builder);
  RegisterSecurityFilters(builder);
  RegisterBuiltins(builder);
}
