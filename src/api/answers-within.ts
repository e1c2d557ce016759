/** Whether `ping` resolves within `timeoutMs`; a ping that fails, or fails later, is false. */
export async function answersWithin(ping: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    // A ping that fails after the timeout must not become an unhandled rejection.
    const answered = ping().then(
      () => true,
      () => false,
    );
    return await Promise.race([answered, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
