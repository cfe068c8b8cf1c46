//! Services whose behaviour later work fills in: every RPC answers UNIMPLEMENTED naming what is missing.

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use super::convert::not_built;

macro_rules! not_built_service {
    ($svc:ident, $trait:path, $service:literal, $missing:literal,
     { $($method:ident($req:ident) -> $resp:ident;)* }) => {
        #[doc = concat!("The ", $service, " service until ", $missing, ".")]
        #[derive(Debug, Default)]
        pub struct $svc;

        #[tonic::async_trait]
        impl $trait for $svc {
            $(
                async fn $method(
                    &self,
                    _request: Request<pb::$req>,
                ) -> Result<Response<pb::$resp>, Status> {
                    Err(not_built(concat!($service, ".", stringify!($method)), $missing))
                }
            )*
        }
    };
}

not_built_service!(GatewayService, pb::gateway_server::Gateway, "Gateway",
    "no chat-platform gateway is built yet", {
    list_platforms(ListPlatformsRequest) -> ListPlatformsResponse;
    list_pairings(ListPairingsRequest) -> ListPairingsResponse;
    approve_pairing(ApprovePairingRequest) -> ApprovePairingResponse;
    revoke_pairing(RevokePairingRequest) -> RevokePairingResponse;
});
