export async function demo(_o: { orders: number; rate: number }): Promise<number> { throw new Error('demo not yet implemented'); }
