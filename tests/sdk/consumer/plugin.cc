// A shared library built from the installed C++ SDK, the shape of an engine plugin or a Python
// extension (tests/sdk/consumer_test.sh builds it with the flags of voxcol.pc and loads it with
// ctypes): one C entry point that casts a ray straight down at (x, z) and returns the ground's
// height. Linking the SDK's static libraries into a shared one needs them position-independent.
#include <voxcol/client/voxcol_client.h>

extern "C" __attribute__((visibility("default"))) int consumer_plugin_ground_y(const char* target,
                                                                               float x, float z,
                                                                               float* y) {
  voxcol::client::Client client(target);
  voxcol::v1::RaycastRequest request;
  request.mutable_origin()->set_x(x);
  request.mutable_origin()->set_y(40);
  request.mutable_origin()->set_z(z);
  request.mutable_direction()->set_y(-1);
  request.set_max_distance(90);
  voxcol::v1::RaycastResponse response;
  const grpc::Status status = client.Raycast(request, &response);
  if (!status.ok()) return int(status.error_code());
  if (!response.hit()) return -1;
  *y = response.first().position().y();
  return 0;
}
