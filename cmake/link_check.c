/* Linked with every object of one layer's library and only the layers below
 * it (CMakeLists.txt, ksr_layer): if any file calls up a layer, this does not
 * link. It never runs. */
int main(void)
{
	return 0;
}
