try {
  Deno.kill(9575, "SIGKILL");
  console.log("killed");
} catch (e) {
  console.log(e.name, e.message);
}
