"""A non-Rust gRPC client of hermesd: lists services by reflection (v1 and v1alpha), checks
health, and calls Daemon.GetStatus using only descriptors fetched by reflection.

Usage: python3 reflect.py SOCKET   (prints one JSON document)
"""

import json
import sys

import grpc
from google.protobuf import descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)


def list_services_v1(channel):
    """grpc.reflection.v1 has the same wire format as v1alpha; call it by its path."""
    call = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    for response in call(iter([request])):
        return sorted(s.name for s in response.list_services_response.service)
    return []


def main():
    socket = sys.argv[1]
    channel = grpc.insecure_channel(
        f"unix:{socket}", options=[("grpc.default_authority", "localhost")]
    )
    database = ProtoReflectionDescriptorDatabase(channel)
    v1alpha = sorted(database.get_services())
    pool = descriptor_pool.DescriptorPool(database)
    daemon = pool.FindServiceByName("hermes.v1.Daemon")
    method = daemon.FindMethodByName("GetStatus")
    request_class = message_factory.GetMessageClass(method.input_type)
    response_class = message_factory.GetMessageClass(method.output_type)
    get_status = channel.unary_unary(
        "/hermes.v1.Daemon/GetStatus",
        request_serializer=request_class.SerializeToString,
        response_deserializer=response_class.FromString,
    )
    status = get_status(request_class())
    health = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service="hermes.v1.Sessions")
    )
    print(
        json.dumps(
            {
                "v1alpha": v1alpha,
                "v1": list_services_v1(channel),
                "daemon_methods": sorted(m.name for m in daemon.methods),
                "status": {"pid": status.pid, "protocol_version": status.protocol_version},
                "health": health_pb2.HealthCheckResponse.ServingStatus.Name(health.status),
            }
        )
    )


if __name__ == "__main__":
    main()
