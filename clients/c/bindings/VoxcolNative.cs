// P/Invoke binding of libvoxcol_c.so (clients/c/voxcol_c.h): the C ABI from C#, as a Unity or
// Godot dedicated server would load it. Build and self-check against a server (Debian's mono):
//   mcs -out:voxcol_native.exe VoxcolNative.cs
//   LD_LIBRARY_PATH=<dir of libvoxcol_c.so> mono voxcol_native.exe TARGET
// In a game project, keep the Voxcol class and set the DllImport name to "voxcol_c".
using System;
using System.Runtime.InteropServices;

namespace Voxcol {

[StructLayout(LayoutKind.Sequential)]
public struct Vec3 {
  public float X, Y, Z;
  public Vec3(float x, float y, float z) { X = x; Y = y; Z = z; }
}

[StructLayout(LayoutKind.Sequential)]
public struct Int3 { public int X, Y, Z; }

[StructLayout(LayoutKind.Sequential)]
public struct Options {
  public UIntPtr StructSize;
  public IntPtr Target, World, Token, CaPem, ServerName;  // UTF-8 strings (Marshal them)
  public int Tls;
  public uint TimeoutMs;
}

[StructLayout(LayoutKind.Sequential)]
public struct Ray {
  public Vec3 Origin, Direction;
  public float MaxDistance;
  public Ray(Vec3 origin, Vec3 direction, float maxDistance) {
    Origin = origin; Direction = direction; MaxDistance = maxDistance;
  }
}

[StructLayout(LayoutKind.Sequential)]
public struct RayHit {
  public int Code, Hit, StartedInside;
  public float Distance;
  public Vec3 Position, Normal;
  public uint Material;
  public Int3 Voxel;
}

// A call answered with a gRPC status code other than OK.
public class VoxcolException : Exception {
  public readonly int Code;
  public VoxcolException(int code, string message) : base("code " + code + ": " + message) {
    Code = code;
  }
}

public static class Native {
  const string Lib = "voxcol_c";
  [DllImport(Lib)] public static extern int voxcol_abi_version();
  [DllImport(Lib)] public static extern IntPtr voxcol_last_error();
  [DllImport(Lib)] public static extern void voxcol_options_init(ref Options options);
  [DllImport(Lib)] public static extern int voxcol_connect(ref Options options, out IntPtr client);
  [DllImport(Lib)] public static extern void voxcol_close(IntPtr client);
  [DllImport(Lib)] public static extern int voxcol_world_info(IntPtr client, out ulong version,
                                                               out Vec3 min, out Vec3 max);
  [DllImport(Lib)] public static extern int voxcol_raycast(IntPtr client, ref Ray ray,
                                                            out RayHit hit, out ulong version);
  [DllImport(Lib)] public static extern int voxcol_raycasts(IntPtr client, Ray[] rays,
                                                             UIntPtr count, ulong minVersion,
                                                             [Out] RayHit[] hits, out ulong version);
  [DllImport(Lib)] public static extern int voxcol_fill_ball(IntPtr client, Vec3 center,
                                                              float radius, uint material,
                                                              out ulong version);

  public static void Check(int code) {
    if (code != 0) throw new VoxcolException(code, Marshal.PtrToStringAnsi(voxcol_last_error()));
  }
}

// One connection; Dispose closes it.
public sealed class Client : IDisposable {
  IntPtr handle;

  public Client(string target, uint timeoutMs = 0) {
    var options = new Options();
    Native.voxcol_options_init(ref options);
    options.Target = Marshal.StringToHGlobalAnsi(target);
    options.TimeoutMs = timeoutMs;
    try {
      Native.Check(Native.voxcol_connect(ref options, out handle));
    } finally {
      Marshal.FreeHGlobal(options.Target);
    }
  }

  IntPtr Live() {
    if (handle == IntPtr.Zero) throw new ObjectDisposedException("Voxcol.Client");
    return handle;
  }

  public RayHit Raycast(Ray ray, out ulong version) {
    Native.Check(Native.voxcol_raycast(Live(), ref ray, out RayHit hit, out version));
    return hit;
  }

  // One batch on the client's Query stream, read at a version >= minVersion.
  public RayHit[] Raycasts(Ray[] rays, ulong minVersion, out ulong version) {
    var hits = new RayHit[rays.Length];
    Native.Check(Native.voxcol_raycasts(Live(), rays, (UIntPtr)rays.Length, minVersion, hits,
                                        out version));
    return hits;
  }

  public ulong FillBall(Vec3 center, float radius, uint material) {
    Native.Check(Native.voxcol_fill_ball(Live(), center, radius, material, out ulong version));
    return version;
  }

  public ulong Version() {
    Native.Check(Native.voxcol_world_info(Live(), out ulong version, out _, out _));
    return version;
  }

  public void Dispose() {
    Native.voxcol_close(handle);
    handle = IntPtr.Zero;
  }
}

public static class SelfCheck {
  static void Expect(bool condition, string what) {
    if (!condition) throw new Exception("check failed: " + what);
  }

  public static int Main(string[] args) {
    if (args.Length != 1) {
      Console.Error.WriteLine("usage: mono voxcol_native.exe TARGET");
      return 2;
    }
    Expect(Native.voxcol_abi_version() == 1, "abi version");
    var rays = new Ray[64];
    for (int i = 0; i < rays.Length; ++i) {
      rays[i] = new Ray(new Vec3(-60.5f + (i * 37) % 120, 40f, -60.5f + (i * 53) % 120),
                        new Vec3(0, -1, 0), 90f);
    }
    using (var client = new Client(args[0])) {
      RayHit[] hits = client.Raycasts(rays, 0, out ulong version);
      int hitCount = 0;
      foreach (RayHit h in hits) hitCount += h.Hit;
      Expect(hitCount > 32, "downward rays should mostly hit");
      for (int i = 0; i < rays.Length; i += 9) {
        RayHit single = client.Raycast(rays[i], out ulong singleVersion);
        Expect(singleVersion == version && single.Hit == hits[i].Hit &&
               single.Distance == hits[i].Distance, "batch ray " + i + " equals its single");
      }
      int g = Array.FindIndex(hits, h => h.Hit == 1 && h.StartedInside == 0);
      ulong edit = client.FillBall(hits[g].Position, 3f, 0);
      Expect(client.Version() == edit, "the edit's version is the world's");
      RayHit[] after = client.Raycasts(new[] { rays[g] }, edit, out ulong seen);
      Expect(seen >= edit, "read at least the edit's version");
      Expect(after[0].Hit == 0 || after[0].Distance > hits[g].Distance + 2, "the carve is seen");
      try {
        client.Raycast(new Ray(new Vec3(0.5f, 0.5f, 0.5f), new Vec3(0, 0, 0), 10f), out _);
        Expect(false, "a zero direction was accepted");
      } catch (VoxcolException e) {
        Expect(e.Code == 3 && e.Message.Contains("direction"), "INVALID_ARGUMENT naming direction");
      }
      Console.WriteLine("VoxcolNative.cs: all checks passed (" + hitCount +
                        " of 64 rays hit, edit at version " + edit + ")");
    }
    try {
      new Client("127.0.0.1:1", 300);
      Expect(false, "an unreachable server connected");
    } catch (VoxcolException e) {
      Expect(e.Code == 14, "UNAVAILABLE for an unreachable server, got " + e.Code);
    }
    return 0;
  }
}

}  // namespace Voxcol
